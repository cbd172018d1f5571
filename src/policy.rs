//! Per-caller policy: which hint classes a caller may run directly, must
//! have confirmed by a human, is refused, or does not see at all.
//!
//! ```text
//! policy: { inapp?: { readOnly?, consequential?, destructive?, untrustedContent?, default?: Decision } }
//! Decision = 'allow' | 'confirm' | 'deny' | 'hide'
//! confirmMode: { inapp?: 'deferred' | 'none' }
//! ```
//!
//! Caller `human` is the user acting in the page: it runs every tool directly,
//! so any `policy.human` entry is `invalid_policy`. For `inapp` (the agent),
//! consequential and destructive tools default to `confirm` and can only be
//! made stricter (`deny`, `hide`): the bridge never runs them for the agent
//! without a human's approval, so `allow` there is `invalid_policy`.

use crate::given::Given;
use crate::prelude::*;
use crate::protocol::{to_json, ErrorEventCode, Hints};
use serde_json::Value;

/// Who calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Caller {
    /// The agent, through the bridge (or `tm.call(…, { caller: 'inapp' })`).
    Inapp,
    /// The user, in the page.
    Human,
}

impl Caller {
    pub fn as_str(self) -> &'static str {
        match self {
            Caller::Inapp => "inapp",
            Caller::Human => "human",
        }
    }

    pub fn parse(text: &str) -> Option<Caller> {
        match text {
            "inapp" => Some(Caller::Inapp),
            "human" => Some(Caller::Human),
            _ => None,
        }
    }

    /// A caller option (`tm.call`'s, `tm.manifest`'s): absent is `default`;
    /// `None` refuses it, with [`Caller::unknown`]'s message.
    pub fn from_given(given: &Given, default: Caller) -> Option<Caller> {
        match given {
            Given::Undefined | Given::Null => Some(default),
            Given::Text(name) => Caller::parse(name),
            _ => None,
        }
    }

    /// The message refusing a caller option of `what` (`call`, `manifest`),
    /// shown as `String(value)`.
    pub fn unknown(what: &str, shown: &str) -> String {
        format!("{}: unknown caller '{}'", what, shown)
    }
}

/// What a policy says about a tool for a caller, least strict first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decision {
    /// Runs directly.
    Allow,
    /// Deferred confirmation: `needs_confirmation`, then a human approves.
    Confirm,
    /// Visible, but calls are `refused not_allowed`.
    Deny,
    /// Not visible: left out of the manifest, calls and describes get `unknown_tool`.
    Hide,
}

impl Decision {
    fn parse(text: &str) -> Option<Decision> {
        match text {
            "allow" => Some(Decision::Allow),
            "confirm" => Some(Decision::Confirm),
            "deny" => Some(Decision::Deny),
            "hide" => Some(Decision::Hide),
            _ => None,
        }
    }
}

/// The classes a tool's hints put it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintClass {
    ReadOnly,
    Consequential,
    Destructive,
    UntrustedContent,
    /// Neither read-only, consequential nor destructive.
    Default,
}

impl HintClass {
    const ALL: [HintClass; 5] = [
        HintClass::ReadOnly,
        HintClass::Consequential,
        HintClass::Destructive,
        HintClass::UntrustedContent,
        HintClass::Default,
    ];

    fn key(self) -> &'static str {
        match self {
            HintClass::ReadOnly => "readOnly",
            HintClass::Consequential => "consequential",
            HintClass::Destructive => "destructive",
            HintClass::UntrustedContent => "untrustedContent",
            HintClass::Default => "default",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// True for the classes that need a human's approval for the agent.
    fn needs_human(self) -> bool {
        matches!(self, HintClass::Consequential | HintClass::Destructive)
    }

    /// Every class the hints put a tool in.
    pub fn of(hints: &Hints) -> impl Iterator<Item = HintClass> + '_ {
        HintClass::ALL
            .into_iter()
            .filter(move |class| class.applies(hints))
    }

    /// Whether the hints put a tool in this class.
    fn applies(self, hints: &Hints) -> bool {
        let on = |flag: Option<bool>| flag == Some(true);
        match self {
            HintClass::ReadOnly => on(hints.read_only),
            HintClass::Consequential => on(hints.consequential),
            HintClass::Destructive => on(hints.destructive),
            HintClass::UntrustedContent => on(hints.untrusted_content),
            HintClass::Default => {
                !on(hints.read_only) && !on(hints.consequential) && !on(hints.destructive)
            }
        }
    }
}

/// How the agent's calls to tools that need confirmation are confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmMode {
    /// `needs_confirmation` now, `confirmed` later (the default, D16).
    Deferred,
    /// No confirmation path: such calls are `refused not_allowed`.
    None,
}

/// A configuration problem, reported as an event (or thrown in dev mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    pub code: ErrorEventCode,
    pub message: String,
}

/// The checked policy of one registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    inapp: [Decision; 5],
    confirm_mode: ConfirmMode,
}

impl Default for Policy {
    fn default() -> Self {
        // Indexed like `HintClass::ALL`: the classes that need a human
        // (consequential, destructive) confirm, the rest run.
        use Decision::{Allow, Confirm};
        Policy {
            inapp: [Allow, Confirm, Confirm, Allow, Allow],
            confirm_mode: ConfirmMode::Deferred,
        }
    }
}

impl Policy {
    /// Reads `policy` and `confirmMode` options (JSON, `null` when absent).
    /// Bad entries are reported and left at their defaults.
    pub fn from_options(policy: &Value, confirm_mode: &Value) -> (Policy, Vec<ConfigIssue>) {
        let mut out = Policy::default();
        let mut issues = Vec::new();
        let mut issue = |code: ErrorEventCode, message: String| {
            issues.push(ConfigIssue { code, message });
        };
        match policy {
            Value::Null => {}
            Value::Object(callers) => {
                for (caller, entries) in callers {
                    match caller.as_str() {
                        "inapp" => out.read_inapp(entries, &mut issue),
                        "human" => {
                            let empty = entries.as_object().is_some_and(|e| e.is_empty());
                            if !empty {
                                issue(
                                    ErrorEventCode::InvalidPolicy,
                                    "policy.human: caller human is the user and runs every tool directly; it takes no policy entries".into(),
                                );
                            }
                        }
                        other => issue(
                            ErrorEventCode::InvalidPolicy,
                            format!("policy.{other}: unknown caller (expected inapp)"),
                        ),
                    }
                }
            }
            _ => issue(
                ErrorEventCode::InvalidPolicy,
                "policy must be an object".into(),
            ),
        }
        match confirm_mode {
            Value::Null => {}
            Value::Object(modes) => {
                for (caller, mode) in modes {
                    match (caller.as_str(), mode.as_str()) {
                        ("inapp", Some("deferred")) => out.confirm_mode = ConfirmMode::Deferred,
                        ("inapp", Some("none")) => out.confirm_mode = ConfirmMode::None,
                        ("inapp", _) => issue(
                            ErrorEventCode::InvalidConfirmMode,
                            format!("confirmMode.inapp: {} is not allowed for caller inapp (an agent cannot wait for a human inline: 'deferred' or 'none')", to_json(mode)),
                        ),
                        (other, _) => issue(
                            ErrorEventCode::InvalidConfirmMode,
                            format!("confirmMode.{other}: not allowed for that caller (only inapp has a confirmation mode)"),
                        ),
                    }
                }
            }
            _ => issue(
                ErrorEventCode::InvalidConfirmMode,
                "confirmMode must be an object".into(),
            ),
        }
        (out, issues)
    }

    fn read_inapp(&mut self, entries: &Value, issue: &mut impl FnMut(ErrorEventCode, String)) {
        let Some(entries) = entries.as_object() else {
            issue(
                ErrorEventCode::InvalidPolicy,
                "policy.inapp must be an object".into(),
            );
            return;
        };
        for (key, value) in entries {
            let Some(class) = HintClass::ALL.into_iter().find(|c| c.key() == key) else {
                issue(
                    ErrorEventCode::InvalidPolicy,
                    format!("policy.inapp.{key}: unknown hint class"),
                );
                continue;
            };
            let Some(decision) = value.as_str().and_then(Decision::parse) else {
                issue(
                    ErrorEventCode::InvalidPolicy,
                    format!(
                        "policy.inapp.{}: {} is not 'allow', 'confirm', 'deny' or 'hide'",
                        key,
                        to_json(value)
                    ),
                );
                continue;
            };
            if class.needs_human() && decision == Decision::Allow {
                issue(
                    ErrorEventCode::InvalidPolicy,
                    format!("policy.inapp.{key}: 'allow' would run {key} tools for the agent without a human's approval; kept 'confirm'"),
                );
                continue;
            }
            if let Some(slot) = self.inapp.get_mut(class.index()) {
                *slot = decision;
            }
        }
    }

    /// The decision for a tool with these hints called by `caller`: the
    /// strictest over the tool's classes.
    pub fn decide(&self, caller: Caller, hints: &Hints) -> Decision {
        match caller {
            Caller::Human => Decision::Allow,
            Caller::Inapp => {
                // A plain loop: the iterator chain costs more in the wasm.
                let mut strictest: Option<Decision> = None;
                for class in HintClass::ALL {
                    if class.applies(hints) {
                        if let Some(&d) = self.inapp.get(class.index()) {
                            strictest = Some(strictest.map_or(d, |s| s.max(d)));
                        }
                    }
                }
                strictest.unwrap_or(Decision::Allow)
            }
        }
    }

    /// Whether `caller` sees the tool at all.
    pub fn visible(&self, caller: Caller, hints: &Hints) -> bool {
        self.decide(caller, hints) != Decision::Hide
    }

    pub fn confirm_mode(&self) -> ConfirmMode {
        self.confirm_mode
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_option_is_inapp_human_or_absent_for_the_default() {
        let given = |name: &str| Given::Text(String::from(name));
        assert_eq!(
            Caller::from_given(&Given::Undefined, Caller::Human),
            Some(Caller::Human)
        );
        assert_eq!(
            Caller::from_given(&Given::Null, Caller::Inapp),
            Some(Caller::Inapp)
        );
        assert_eq!(
            Caller::from_given(&given("inapp"), Caller::Human),
            Some(Caller::Inapp)
        );
        assert_eq!(
            Caller::from_given(&given("human"), Caller::Inapp),
            Some(Caller::Human)
        );
        for refused in [
            given("robot"),
            given("Human"),
            given(""),
            Given::Number(1.0),
            Given::Other,
        ] {
            assert_eq!(Caller::from_given(&refused, Caller::Human), None);
        }
        assert_eq!(
            Caller::unknown("call", "robot"),
            "call: unknown caller 'robot'"
        );
    }
    use serde_json::json;

    fn hints(read_only: bool, consequential: bool, destructive: bool) -> Hints {
        Hints {
            read_only: Some(read_only),
            consequential: Some(consequential),
            destructive: Some(destructive),
            ..Hints::default()
        }
    }

    #[test]
    fn defaults_confirm_consequential_and_destructive_for_the_agent() {
        let p = Policy::default();
        assert_eq!(p.decide(Caller::Inapp, &Hints::default()), Decision::Allow);
        assert_eq!(
            p.decide(Caller::Inapp, &hints(true, false, false)),
            Decision::Allow
        );
        assert_eq!(
            p.decide(Caller::Inapp, &hints(false, true, false)),
            Decision::Confirm
        );
        assert_eq!(
            p.decide(Caller::Inapp, &hints(false, false, true)),
            Decision::Confirm
        );
        assert_eq!(
            p.decide(Caller::Human, &hints(false, false, true)),
            Decision::Allow
        );
        assert_eq!(p.confirm_mode(), ConfirmMode::Deferred);
    }

    #[test]
    fn the_default_table_confirms_exactly_the_classes_that_need_a_human() {
        let p = Policy::default();
        for class in HintClass::ALL {
            let want = if class.needs_human() {
                Decision::Confirm
            } else {
                Decision::Allow
            };
            assert_eq!(p.inapp.get(class.index()), Some(&want), "{class:?}");
        }
    }

    #[test]
    fn options_tighten_and_the_strictest_class_wins() {
        let (p, issues) = Policy::from_options(
            &json!({"inapp": {"destructive": "hide", "untrustedContent": "deny", "default": "confirm", "readOnly": "allow"}}),
            &json!({"inapp": "none"}),
        );
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(
            p.decide(Caller::Inapp, &hints(false, true, true)),
            Decision::Hide
        );
        assert!(!p.visible(Caller::Inapp, &hints(false, false, true)));
        assert!(p.visible(Caller::Human, &hints(false, false, true)));
        let untrusted = Hints {
            read_only: Some(true),
            untrusted_content: Some(true),
            ..Hints::default()
        };
        assert_eq!(p.decide(Caller::Inapp, &untrusted), Decision::Deny);
        assert_eq!(
            p.decide(Caller::Inapp, &Hints::default()),
            Decision::Confirm
        );
        assert_eq!(
            p.decide(Caller::Inapp, &hints(true, false, false)),
            Decision::Allow,
            "a read-only tool is not in the default class"
        );
        assert_eq!(p.confirm_mode(), ConfirmMode::None);
    }

    #[test]
    fn callers_parse_from_their_names_only() {
        for caller in [Caller::Inapp, Caller::Human] {
            assert_eq!(Caller::parse(caller.as_str()), Some(caller));
        }
        assert_eq!(Caller::parse("Human"), None);
        assert_eq!(Caller::parse("agent"), None);
    }

    #[test]
    fn bad_entries_are_reported_and_ignored() {
        let (p, issues) = Policy::from_options(
            &json!({"inapp": {"consequential": "allow", "sneaky": "allow", "readOnly": "maybe"},
                    "human": {"destructive": "deny"}, "robot": {}}),
            &json!({"inapp": "inline", "human": "deferred"}),
        );
        let codes: Vec<&str> = issues.iter().map(|i| i.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "invalid_policy",
                "invalid_policy",
                "invalid_policy",
                "invalid_policy",
                "invalid_policy",
                "invalid_confirm_mode",
                "invalid_confirm_mode"
            ]
        );
        assert_eq!(p, Policy::default());
        let (_, issues) = Policy::from_options(&json!(3), &json!("x"));
        assert_eq!(issues.len(), 2);
        let (_, issues) = Policy::from_options(&json!({"human": {}}), &Value::Null);
        assert!(issues.is_empty());
    }
}
