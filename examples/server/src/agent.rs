//! The agent behind the two LLM tools. [`ScriptedAgent`] is deterministic
//! and offline: it sees exactly what a model would (the conversation and the
//! tool definitions, the page's tools only through `page_call`'s rendered
//! description) and follows the preamble.

use std::future::Future;
use std::pin::Pin;

use serde_json::{json, Map, Value};

use crate::llm::{Message, Reply, ToolDef, ToolUse, PAGE_CALL, PAGE_DESCRIBE};

pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// One step of the model: given the conversation and the tools of this
/// turn (none in an acknowledgement turn), answer with text, tool calls, or
/// both.
pub trait Agent: Send + Sync + 'static {
    fn next<'a>(&'a self, history: &'a [Message], tools: &'a [ToolDef]) -> AgentFuture<'a>;
}

/// How many times a turn starts over after the page changed under it.
const MAX_RETRIES: usize = 2;

#[derive(Default)]
pub struct ScriptedAgent;

impl Agent for ScriptedAgent {
    fn next<'a>(&'a self, history: &'a [Message], tools: &'a [ToolDef]) -> AgentFuture<'a> {
        Box::pin(async move { scripted_step(history, tools) })
    }
}

fn text(reply: impl Into<String>) -> Reply {
    Reply {
        text: Some(reply.into()),
        tool_uses: Vec::new(),
    }
}

fn tool_use(name: &str, input: Value) -> Reply {
    Reply {
        text: None,
        tool_uses: vec![ToolUse {
            id: crate::protocol::new_id(),
            name: name.to_owned(),
            input,
        }],
    }
}

/// The result inside an untrusted-content wrapper, or the value itself.
fn unwrap_result(content: &str) -> Value {
    let value: Value = serde_json::from_str(content).unwrap_or(Value::Null);
    if value.get("untrustedContent") == Some(&Value::Bool(true)) {
        return value.get("result").cloned().unwrap_or(Value::Null);
    }
    value
}

fn field<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Tool names listed under "Page tools:" in `page_call`'s description.
fn page_tool_names(tools: &[ToolDef]) -> Vec<String> {
    let Some(call) = tools.iter().find(|tool| tool.name == PAGE_CALL) else {
        return Vec::new();
    };
    call.description
        .lines()
        .skip_while(|line| *line != "Page tools:")
        .filter_map(|line| line.strip_prefix("- "))
        .filter_map(|line| line.split(" — ").next())
        .map(str::to_owned)
        .collect()
}

/// The email address in a chat line, if any.
fn email_in(line: &str) -> Option<String> {
    line.split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| {
                !(c.is_alphanumeric() || c == '@' || c == '.' || c == '_' || c == '-' || c == '+')
            })
        })
        .map(|word| word.trim_end_matches('.'))
        .find(|word| {
            word.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty() && domain.contains('.') && !domain.starts_with('.')
            })
        })
        .map(str::to_owned)
}

/// The fill input for a form's input schema: the email address, and a name
/// (from the address) when the form has a required name field.
fn fill_input(schema: &Value, email: &str) -> Value {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut input = Map::new();
    let email_key = properties
        .and_then(|props| {
            props
                .keys()
                .find(|key| key.to_ascii_lowercase().contains("email"))
        })
        .map_or("email".to_owned(), Clone::clone);
    input.insert(email_key, email.into());
    if let Some(props) = properties {
        for key in props.keys() {
            let lower = key.to_ascii_lowercase();
            if required.contains(&key.as_str())
                && lower.contains("name")
                && !input.contains_key(key)
            {
                let local = email.split('@').next().unwrap_or(email);
                let mut chars = local.chars();
                let name: String = chars
                    .next()
                    .map(|first| first.to_uppercase().chain(chars).collect())
                    .unwrap_or_default();
                input.insert(key.clone(), name.into());
            }
        }
    }
    Value::Object(input)
}

fn describe_issues(result: &Value) -> String {
    let issues: Vec<String> = result
        .get("issues")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|issue| format!("{}: {}", field(issue, "path"), field(issue, "message")))
                .collect()
        })
        .unwrap_or_default();
    if issues.is_empty() {
        "the input was not valid".to_owned()
    } else {
        issues.join("; ")
    }
}

/// Says what became of a deferred confirmation (the acknowledgement turn).
fn acknowledge(history: &[Message]) -> Reply {
    let outcome = history.iter().rev().find_map(|message| match message {
        Message::ToolResult {
            confirm_id: Some(_),
            content,
            ..
        } => Some(unwrap_result(content)),
        _ => None,
    });
    let Some(result) = outcome else {
        return text("There is nothing to confirm.");
    };
    let data = result.get("data").cloned().unwrap_or(Value::Null);
    text(match (crate::protocol::status(&result), field(&result, "code")) {
        // formTools' submit of a form failing its constraints: nothing sent.
        ("ok", _) if data.get("submitted") == Some(&Value::Bool(false)) => {
            let issues = json!({ "issues": data.get("invalid").cloned().unwrap_or(Value::Null) });
            format!(
                "You approved it, but the form was not submitted ({}). Fill those in, then ask me again.",
                describe_issues(&issues)
            )
        }
        ("ok", _) => "Done: you approved it and the form was submitted.".to_owned(),
        ("cancelled", _) => "Understood: you rejected it, so nothing was submitted.".to_owned(),
        ("refused", "confirmation_expired") => {
            "The confirmation expired before it was approved, so nothing was submitted. Ask me again if you still want it.".to_owned()
        }
        ("refused", "stale") => {
            "The form changed before you approved it, so nothing was submitted. Ask me again and I will fill it in anew.".to_owned()
        }
        ("invalid", _) => format!("The form was not accepted: {}.", describe_issues(&result)),
        _ => "The submission did not go through.".to_owned(),
    })
}

fn scripted_step(history: &[Message], tools: &[ToolDef]) -> Reply {
    if tools.is_empty() {
        return acknowledge(history);
    }
    let start = history
        .iter()
        .rposition(|message| matches!(message, Message::User { .. }));
    let Some(Message::User { text: line }) = start.and_then(|i| history.get(i)) else {
        return text("How can I help?");
    };
    let turn = start.map_or(&[][..], |i| history.get(i + 1..).unwrap_or_default());
    let lower = line.to_lowercase();
    if !(lower.contains("sign") || lower.contains("register")) {
        return text(
            "I can fill in the sign-up form on this page: say \"sign me up as you@example.com\".",
        );
    }
    let Some(email) = email_in(line) else {
        return text("Which email address should I sign you up with?");
    };
    let names = page_tool_names(tools);
    if names.is_empty() {
        return text("No page tools are available right now: open the sign-up page and ask again.");
    }
    let Some(fill) = names.iter().find(|name| name.ends_with("fill")) else {
        return text("This page has no form I can fill in.");
    };
    let submit = names.iter().find(|name| name.ends_with("submit"));

    // The tool calls of this turn, each with its outcome.
    let mut steps: Vec<(&ToolUse, Value)> = Vec::new();
    for message in turn {
        if let Message::Assistant { tool_uses, .. } = message {
            for used in tool_uses {
                let outcome = turn.iter().find_map(|m| match m {
                    Message::ToolResult {
                        tool_use_id,
                        confirm_id: None,
                        content,
                    } if *tool_use_id == used.id => Some(unwrap_result(content)),
                    _ => None,
                });
                steps.push((used, outcome.unwrap_or(Value::Null)));
            }
        }
    }
    let retries = steps
        .iter()
        .filter(|(_, result)| {
            crate::protocol::status(result) == "refused"
                && matches!(field(result, "code"), "stale" | "unknown_tool")
        })
        .count();
    let describe_fill = || tool_use(PAGE_DESCRIBE, json!({ "tool": fill }));
    let Some((last, result)) = steps.last() else {
        return describe_fill();
    };
    let called = field(&last.input, "tool");
    let status = crate::protocol::status(result);
    let code = field(result, "code");
    if status == "refused" && matches!(code, "stale" | "unknown_tool") {
        // The page changed: start over from the latest manifest.
        if retries > MAX_RETRIES {
            return text("The page keeps changing under me; please try again in a moment.");
        }
        return describe_fill();
    }
    match (last.name.as_str(), status) {
        (_, "timeout") => text("The page did not answer in time, so I stopped."),
        (_, "unavailable") => text("No page is connected to this conversation: open the sign-up page and ask again."),
        (_, "needs_confirmation") => text(format!(
            "I filled in the form with {email} and asked to submit it. A confirmation is waiting in the page: “{}”. Approve or reject it there.",
            field(result, "summary")
        )),
        (PAGE_DESCRIBE, "ok") => {
            let schema = result
                .get("data")
                .and_then(|data| data.get("inputSchema"))
                .cloned()
                .unwrap_or(Value::Null);
            tool_use(PAGE_CALL, json!({ "tool": fill, "input": fill_input(&schema, &email) }))
        }
        (PAGE_CALL, "ok") if called == fill.as_str() => match submit {
            Some(submit) => tool_use(PAGE_CALL, json!({ "tool": submit, "input": {} })),
            None => text(format!("I filled in the form with {email}.")),
        },
        (PAGE_CALL, "ok") => text("Done: the form was submitted."),
        (_, "invalid") => text(format!("The form did not accept that: {}.", describe_issues(result))),
        (_, "refused") => text(format!("The page refused: {}.", field(result, "message"))),
        (_, "cancelled") => text("The call was cancelled."),
        _ => text("Something went wrong on the page, so I stopped."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::page_tools;
    use crate::protocol::{Manifest, ToolSummary};

    fn tools() -> Vec<ToolDef> {
        let summary = |name: &str, consequential| ToolSummary {
            name: name.into(),
            description: "d".into(),
            read_only: false,
            consequential,
            destructive: false,
            untrusted_content: false,
        };
        page_tools(Some(&Manifest {
            rev: 1,
            tools: vec![
                summary("signup.fill", false),
                summary("signup.submit", true),
            ],
        }))
    }

    fn result_for(reply: &Reply, content: Value) -> Vec<Message> {
        vec![
            Message::Assistant {
                text: None,
                tool_uses: reply.tool_uses.clone(),
            },
            Message::ToolResult {
                tool_use_id: reply.tool_uses[0].id.clone(),
                confirm_id: None,
                content: content.to_string(),
            },
        ]
    }

    #[test]
    fn signs_up_through_describe_fill_submit() {
        let tools = tools();
        let mut history = vec![Message::User {
            text: "sign me up as ada@example.com".into(),
        }];
        let step = scripted_step(&history, &tools);
        assert_eq!(step.tool_uses[0].name, "page_describe");
        assert_eq!(step.tool_uses[0].input, json!({ "tool": "signup.fill" }));
        let schema = json!({ "type": "object", "properties": { "name": {}, "email": {} }, "required": ["name", "email"] });
        history.extend(result_for(
            &step,
            json!({ "status": "ok", "data": { "inputSchema": schema } }),
        ));

        let step = scripted_step(&history, &tools);
        assert_eq!(
            step.tool_uses[0].input,
            json!({ "tool": "signup.fill", "input": { "email": "ada@example.com", "name": "Ada" } })
        );
        history.extend(result_for(&step, json!({ "status": "ok" })));

        let step = scripted_step(&history, &tools);
        assert_eq!(
            step.tool_uses[0].input,
            json!({ "tool": "signup.submit", "input": {} })
        );
        history.extend(result_for(
            &step,
            json!({ "status": "needs_confirmation", "confirmId": "k", "summary": "Submit the form" }),
        ));
        let step = scripted_step(&history, &tools);
        assert!(step.tool_uses.is_empty());
        assert!(step
            .text
            .unwrap_or_default()
            .contains("confirmation is waiting"));
    }

    #[test]
    fn page_changes_restart_from_describe_and_ack_turns_speak_only() {
        let tools = tools();
        let mut history = vec![Message::User {
            text: "Please sign me up as ada@example.com.".into(),
        }];
        let step = scripted_step(&history, &tools);
        history.extend(result_for(
            &step,
            json!({ "status": "refused", "code": "unknown_tool", "rev": 4 }),
        ));
        let step = scripted_step(&history, &tools);
        assert_eq!(step.tool_uses[0].name, "page_describe");

        history.push(Message::ToolResult {
            tool_use_id: "u".into(),
            confirm_id: Some("k".into()),
            content: crate::llm::wrap_untrusted(
                &json!({ "status": "cancelled", "by": "operator" }),
            )
            .to_string(),
        });
        let ack = scripted_step(&history, &[]);
        assert!(ack.tool_uses.is_empty());
        assert_eq!(
            ack.text.as_deref(),
            Some("Understood: you rejected it, so nothing was submitted.")
        );
    }

    #[test]
    fn an_approved_submission_that_failed_is_reported_with_its_reason() {
        let history = vec![Message::ToolResult {
            tool_use_id: "u".into(),
            confirm_id: Some("k".into()),
            content: crate::llm::wrap_untrusted(&json!({
                "status": "ok",
                "data": {
                    "submitted": false,
                    "invalid": [{ "path": "name", "message": "Please fill out this field." }]
                }
            }))
            .to_string(),
        }];
        assert_eq!(
            scripted_step(&history, &[]).text.as_deref(),
            Some("You approved it, but the form was not submitted (name: Please fill out this field.). Fill those in, then ask me again.")
        );
    }

    #[test]
    fn no_tools_and_no_email() {
        let empty = page_tools(None);
        let ask = |line: &str, tools: &[ToolDef]| {
            scripted_step(&[Message::User { text: line.into() }], tools)
                .text
                .unwrap_or_default()
        };
        assert!(ask("sign me up as ada@example.com", &empty).starts_with("No page tools"));
        assert!(ask("sign me up", &tools()).starts_with("Which email"));
        assert_eq!(
            email_in("as <ada@example.com>, thanks"),
            Some("ada@example.com".into())
        );
    }
}
