//! What `webmcp()` offers a browser's model context (`registerTool`): which
//! registrations follow the registry's `inapp` tools after a change, and
//! the annotations a tool's hints become. The driver (src/wasm/webmcp.rs)
//! reads the entries, registers and aborts.
//!
//! A registration is keyed by its manifest entry's JSON text: the text
//! holds the tool's name and names are unique, so an equal text is the
//! same tool unchanged, and a changed tool (description, schema, hints) is
//! registered again under a fresh registration.

use crate::given::{self, Given};
use crate::prelude::*;

/// Where `webmcp()` registers the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextChoice {
    /// `options.modelContext`.
    Given,
    /// The host's, looked up when the plugin attaches: the first of
    /// [`CONTEXT_OWNERS`]' `modelContext` that [`usable`] takes.
    Host,
}

/// Whose `modelContext` is the host's: `document`'s, else the earlier
/// `navigator`'s.
pub const CONTEXT_OWNERS: [&str; 2] = ["document", "navigator"];

/// A model context with a `registerTool` function.
pub fn usable(context: &Given, register_tool: &Given) -> bool {
    !context.is_absent() && matches!(register_tool, Given::Function)
}

/// `webmcp(options)`: `options` absent or an object, its `modelContext`
/// absent or [`usable`].
pub fn options(
    options: &Given,
    model_context: &Given,
    register_tool: &Given,
) -> Result<ContextChoice, &'static str> {
    given::options_object(options, "webmcp: options must be an object")?;
    if model_context.is_absent() {
        Ok(ContextChoice::Host)
    } else if usable(model_context, register_tool) {
        Ok(ContextChoice::Given)
    } else {
        Err("webmcp: modelContext must have registerTool(tool, options)")
    }
}

/// A tool the model context did not take (an `error` event; the page
/// goes on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistrationFailure {
    /// `new AbortController()` threw: no registration without one.
    NoController,
    /// `registerTool` threw or rejected (a duplicate name, a permissions
    /// policy, an insecure context).
    Rejected,
}

impl RegistrationFailure {
    /// A rejection whose error has the name `error_name`: none for an
    /// `AbortError`, the abort of the registration's own controller (the
    /// tool went meanwhile).
    pub fn rejected(error_name: Option<&str>) -> Option<RegistrationFailure> {
        (error_name != Some("AbortError")).then_some(RegistrationFailure::Rejected)
    }

    /// The event's text for `tool`, with the error as the boundary
    /// describes it.
    pub fn message(self, tool: &str, detail: &str) -> String {
        match self {
            RegistrationFailure::NoController => {
                format!("webmcp: {tool} not registered: new AbortController() failed: {detail}")
            }
            RegistrationFailure::Rejected => {
                format!("webmcp: registerTool({tool}) was rejected: {detail}")
            }
        }
    }
}

/// How the registrations follow the entries visible to `inapp` now.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sync {
    /// Indexes into the registrations, highest first, of those to abort:
    /// their tool is gone or changed (removing them in this order keeps
    /// the lower indexes valid).
    pub stale: Vec<usize>,
    /// Indexes into the entries, in their order, of those to register: not
    /// registered as they are now.
    pub new: Vec<usize>,
}

/// The registrations' entries against the entries visible now.
pub fn sync(registered: &[&str], entries: &[String]) -> Sync {
    let mut plan = Sync::default();
    for (i, text) in registered.iter().enumerate().rev() {
        if !entries.iter().any(|entry| entry == text) {
            plan.stale.push(i);
        }
    }
    for (i, entry) in entries.iter().enumerate() {
        if !registered.contains(&entry.as_str()) {
            plan.new.push(i);
        }
    }
    plan
}

/// The `annotations` of a registered tool, from its hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub untrusted_content: bool,
    /// WebMCP has one hint for both: a destructive tool is consequential.
    pub consequential: bool,
}

impl Annotations {
    /// `hint(name)`: whether the tool's hint of that name is `true`.
    pub fn of(hint: impl Fn(&str) -> bool) -> Annotations {
        Annotations {
            read_only: hint("readOnly"),
            untrusted_content: hint("untrustedContent"),
            consequential: hint("consequential") || hint("destructive"),
        }
    }
}

/// The `inputSchema` a tool is registered with when its schema is a
/// boolean (`Some`): `registerTool` takes an object (the polyfill throws
/// "inputSchema must be an object"), so `true` is `{}` and `false`
/// `{"not":{}}`, the objects that accept the same. `None`: an object
/// schema goes as it is.
pub fn object_schema(boolean: Option<bool>) -> Option<&'static str> {
    boolean.map(|accepts| if accepts { "{}" } else { r#"{"not":{}}"# })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_are_an_object_whose_model_context_can_register_tools() {
        let f = &Given::Function;
        let o = &Given::Object;
        for absent in [Given::Undefined, Given::Null] {
            assert_eq!(options(&absent, &absent, f), Ok(ContextChoice::Host));
            assert_eq!(
                options(o, &absent, &Given::Undefined),
                Ok(ContextChoice::Host)
            );
        }
        assert_eq!(options(o, o, f), Ok(ContextChoice::Given));
        assert_eq!(options(o, f, f), Ok(ContextChoice::Given));
        let lacking = Err("webmcp: modelContext must have registerTool(tool, options)");
        assert_eq!(options(o, o, &Given::Undefined), lacking);
        assert_eq!(options(o, o, o), lacking);
        assert_eq!(options(o, &Given::Number(1.0), &Given::Undefined), lacking);
        for refused in [
            Given::Function,
            Given::Text(String::from("x")),
            Given::Other,
        ] {
            assert_eq!(
                options(&refused, o, f),
                Err("webmcp: options must be an object"),
                "{refused:?}"
            );
        }
    }

    #[test]
    fn a_rejected_registration_is_a_failure_unless_it_was_our_abort() {
        assert_eq!(RegistrationFailure::rejected(Some("AbortError")), None);
        for name in [
            None,
            Some("Error"),
            Some("NotAllowedError"),
            Some("aborterror"),
        ] {
            assert_eq!(
                RegistrationFailure::rejected(name),
                Some(RegistrationFailure::Rejected),
                "{name:?}"
            );
        }
        assert_eq!(
            RegistrationFailure::Rejected.message("later", "Error: refused"),
            "webmcp: registerTool(later) was rejected: Error: refused"
        );
        assert_eq!(
            RegistrationFailure::NoController.message("t", "Error: none"),
            "webmcp: t not registered: new AbortController() failed: Error: none"
        );
    }

    #[test]
    fn a_host_context_is_present_with_register_tool() {
        assert!(usable(&Given::Object, &Given::Function));
        assert!(!usable(&Given::Object, &Given::Undefined));
        assert!(!usable(&Given::Null, &Given::Function));
        assert!(!usable(&Given::Undefined, &Given::Function));
        assert_eq!(CONTEXT_OWNERS, ["document", "navigator"]);
    }

    #[test]
    fn unchanged_entries_stay_and_gone_or_changed_ones_are_replaced() {
        let registered = ["a", "b1", "c", "d"];
        let entries = texts(&["a", "b2", "d", "e"]);
        assert_eq!(
            sync(&registered, &entries),
            Sync {
                stale: vec![2, 1],
                new: vec![1, 3],
            }
        );
        assert_eq!(sync(&registered, &texts(&registered)), Sync::default());
        assert_eq!(
            sync(&[], &texts(&["x", "y"])),
            Sync {
                stale: vec![],
                new: vec![0, 1],
            }
        );
        assert_eq!(
            sync(&["x", "y"], &[]),
            Sync {
                stale: vec![1, 0],
                new: vec![],
            }
        );
    }

    #[test]
    fn removing_the_stale_in_their_order_leaves_the_unchanged() {
        let mut registered = vec!["a", "gone", "b", "old", "c"];
        let entries = texts(&["c", "new", "a", "b"]);
        let plan = sync(&registered, &entries);
        for i in plan.stale {
            registered.remove(i);
        }
        assert_eq!(registered, ["a", "b", "c"]);
        assert_eq!(plan.new, [1]);
    }

    #[test]
    fn a_destructive_tool_is_consequential_to_webmcp() {
        let of = |hints: &[&str]| Annotations::of(|name| hints.contains(&name));
        assert_eq!(
            of(&["readOnly", "untrustedContent"]),
            Annotations {
                read_only: true,
                untrusted_content: true,
                consequential: false,
            }
        );
        assert!(of(&["destructive"]).consequential);
        assert!(of(&["consequential"]).consequential);
        assert_eq!(
            of(&[]),
            Annotations {
                read_only: false,
                untrusted_content: false,
                consequential: false,
            }
        );
    }

    #[test]
    fn a_boolean_schema_is_registered_as_the_object_that_accepts_the_same() {
        assert_eq!(object_schema(Some(true)), Some("{}"));
        assert_eq!(object_schema(Some(false)), Some(r#"{"not":{}}"#));
        assert_eq!(object_schema(None), None);
    }
}
