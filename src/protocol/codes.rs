//! Every code of the spec, as enums that serialize to the exact strings.

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in the spec's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The exact wire string.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the exact wire string.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

string_enum! {
    /// `code` of a `refused` result.
    RefusedCode {
        /// No such tool, or not visible (carries the current rev).
        UnknownTool => "unknown_tool",
        /// The call's rev is out of date and the tool is gone; or a form changed since confirmation.
        Stale => "stale",
        /// The caller's policy does not allow this tool.
        NotAllowed => "not_allowed",
        /// The tool's scope already has 32 pending calls.
        Busy => "busy",
        /// `undo(callId)` found no restorer.
        UndoUnavailable => "undo_unavailable",
        /// The confirmId expired, was already used, or was evicted.
        ConfirmationExpired => "confirmation_expired",
    }
}

impl RefusedCode {
    /// Only these refusals carry the page's current `rev`.
    pub fn carries_rev(self) -> bool {
        matches!(self, RefusedCode::UnknownTool | RefusedCode::Stale)
    }
}

string_enum! {
    /// `by` of a `cancelled` result.
    CancelledBy {
        /// A human rejected.
        Operator => "operator",
        /// Aborted: cancel, or the abort grace period elapsed.
        Signal => "signal",
        /// Cancelled by policy.
        Policy => "policy",
    }
}

string_enum! {
    /// Codes of page-side `error` events (thrown as `ToolmarkError` in dev mode).
    ErrorEventCode {
        DuplicateName => "duplicate_name",
        InvalidName => "invalid_name",
        InvalidScope => "invalid_scope",
        MissingConfirmHandler => "missing_confirm_handler",
        SchemaConversionFailed => "schema_conversion_failed",
        ToolThrew => "tool_threw",
        OutputInvalid => "output_invalid",
        TransportFailed => "transport_failed",
        ToolBudgetExceeded => "tool_budget_exceeded",
        CtxConfirmUnavailable => "ctx_confirm_unavailable",
        InvalidConfirmMode => "invalid_confirm_mode",
        InvalidPolicy => "invalid_policy",
        LateResult => "late_result",
        InvalidMessage => "invalid_message",
        ScopeDisposed => "scope_disposed",
    }
}

string_enum! {
    /// Codes of `ToolmarkError`s that are only thrown or rejected, never events.
    ThrownErrorCode {
        InvalidPath => "invalid_path",
        FilesNotConfigured => "files_not_configured",
        /// An argument or option of the wrong type or value.
        InvalidArgument => "invalid_argument",
        /// A transport used after it stopped (`close()`, a terminal close,
        /// a rejecting `onOpen`, a target window gone).
        TransportClosed => "transport_closed",
        /// The host lacks what is needed (a WebSocket, `fetch`, Web Crypto).
        HostUnsupported => "host_unsupported",
        /// The package's module could not be fetched, compiled or
        /// instantiated (thrown by the JS loader; named here with the rest).
        ModuleUnavailable => "module_unavailable",
        /// The registry was called back while it was updating itself.
        ReentrantCall => "reentrant_call",
        /// A plugin used after its registry was freed.
        RegistryGone => "registry_gone",
        /// The in-page agent's request got no answer within `timeoutMs`.
        Timeout => "timeout",
        /// The in-page agent already has 100 requests waiting for the
        /// page's first manifest.
        QueueFull => "queue_full",
        /// The `/slim` entry used before `initialize()` resolved.
        NotInitialized => "not_initialized",
    }
}

/// A `ToolmarkError`'s code: an error event's (thrown in dev mode) or a
/// thrown-only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolmarkErrorCode {
    Event(ErrorEventCode),
    Thrown(ThrownErrorCode),
}

impl ToolmarkErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolmarkErrorCode::Event(code) => code.as_str(),
            ToolmarkErrorCode::Thrown(code) => code.as_str(),
        }
    }
}

impl From<ErrorEventCode> for ToolmarkErrorCode {
    fn from(code: ErrorEventCode) -> ToolmarkErrorCode {
        ToolmarkErrorCode::Event(code)
    }
}

impl From<ThrownErrorCode> for ToolmarkErrorCode {
    fn from(code: ThrownErrorCode) -> ToolmarkErrorCode {
        ToolmarkErrorCode::Thrown(code)
    }
}

string_enum! {
    /// Which way a message travels.
    Direction {
        /// Agent → page messages (`call`, `describe`, `cancel`): `validateMessage(v, 'toPage')`.
        ToPage => "toPage",
        /// Page → agent messages (`manifest`, `changed`, `result`, `confirmed`).
        ToAgent => "toAgent",
    }
}

/// The generic `error` result messages of the bridge (details go to events only).
pub mod error_message {
    pub const UNSUPPORTED_PROTOCOL: &str = "unsupported protocol";
    pub const TOOL_FAILED: &str = "Tool failed";
    pub const NOT_SERIALIZABLE: &str = "Result not serializable";
}

/// Fixed refusal messages of the spec.
pub mod refused_message {
    pub const CONFIRMATION_EXPIRED: &str = "The confirmation expired or was already used";
    pub const FORM_CHANGED: &str = "Form changed since confirmation was requested";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn codes_serialize_to_the_exact_strings() {
        let refused: Vec<&str> = RefusedCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            refused,
            [
                "unknown_tool",
                "stale",
                "not_allowed",
                "busy",
                "undo_unavailable",
                "confirmation_expired"
            ]
        );
        for code in RefusedCode::ALL {
            assert_eq!(RefusedCode::parse(code.as_str()), Some(*code));
            assert_eq!(code.to_string(), code.as_str());
        }
        assert_eq!(ErrorEventCode::ALL.len(), 15);
        for code in ErrorEventCode::ALL {
            assert_eq!(ErrorEventCode::parse(code.as_str()), Some(*code));
        }
        assert_eq!(CancelledBy::Operator.as_str(), "operator");
        assert_eq!(ThrownErrorCode::InvalidPath.as_str(), "invalid_path");
        assert_eq!(RefusedCode::parse("Busy"), None);
    }
}
