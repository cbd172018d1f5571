//! JSON Schema draft 2020-12 validation for tool inputs (in progress).
