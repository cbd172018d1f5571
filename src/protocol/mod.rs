//! The protocol layer: message types, codes, inbound parsing and the
//! published JSON Schemas of Toolmark bridge protocol v1.

pub mod codes;
pub mod inbound;
pub mod json_text;
pub mod manifest;
pub mod message;
pub mod result;
pub mod schemas;
mod validation;
mod values;

/// `protocol: 1`.
pub const PROTOCOL_VERSION: u8 = 1;

pub use codes::{
    CancelledBy, Direction, ErrorEventCode, RefusedCode, ThrownErrorCode, ToolmarkErrorCode,
};
pub use inbound::{
    check_agent_to_page, check_page_to_agent, parse_agent_to_page, parse_for_page, parse_json,
    parse_page_to_agent, parse_value, peek_client_id, validate, validate_written, validation_reads,
    Rejection, Written, BAD_DIRECTION, DEFAULT_MAX_MESSAGE_BYTES, MAX_DEPTH, MAX_VALIDATED_BYTES,
    MAX_VALIDATED_DEPTH,
};
pub use json_text::JsonText;
pub use manifest::{Hints, ToolManifest, ToolManifestSummary, ToolMode};
pub(crate) use message::to_json;
pub use message::{
    AgentToPage, Call, Cancel, Changed, Confirmed, Describe, Manifest, PageToAgent, ProtocolV1,
    ResultMessage,
};
pub use result::{
    Data, FieldChange, Issue, ToolResult, MAX_REPORTED_ISSUES, MAX_RESULT_DEPTH,
    UNTRUSTED_CONTENT_NOTE,
};
pub use values::{field_changes_from_value, hints_from_value, issues_from_value};
