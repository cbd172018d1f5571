//! A real model behind the same [`Agent`] loop, when the environment names
//! one: an OpenAI-compatible chat completions endpoint (`OPENAI_API_KEY`,
//! `OPENAI_MODEL`, optional `OPENAI_BASE_URL`) or Anthropic's Messages API
//! (`ANTHROPIC_API_KEY`, optional `ANTHROPIC_MODEL`). Nothing here runs
//! unless one is set; the tests pin the request and reply mapping only.
//!
//! The tools go to the provider as they are: `page_call` and
//! `page_describe` with their byte-identical descriptions and schemas. A
//! confirmation's outcome (a [`Message::ToolResult`] with a `confirm_id`)
//! follows its tool call's first result, which providers do not accept as a
//! second tool result, so it is sent as a clearly marked user-role message,
//! still wrapped as page data.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::agent::{Agent, AgentFuture};
use crate::llm::{Message, Reply, ToolDef, ToolUse};

/// The system prompt: what the assistant is for. The page's tools and the
/// rules for them are in `page_call`'s description.
pub const SYSTEM_PROMPT: &str = "You are the assistant of the web page the user has open. Act on the page only through page_call and page_describe, and answer the user briefly in plain text.";

const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
const ANTHROPIC_URL: &str = "https://api.anthropic.com/v1/messages";
const MAX_TOKENS: u32 = 1024;

#[derive(Clone, Debug, PartialEq)]
pub enum Provider {
    OpenAi {
        base_url: String,
        api_key: String,
        model: String,
    },
    Anthropic {
        api_key: String,
        model: String,
    },
}

impl Provider {
    /// The provider the environment configures, OpenAI-compatible first.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        if let (Some(api_key), Some(model)) = (var("OPENAI_API_KEY"), var("OPENAI_MODEL")) {
            let base_url =
                var("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_OPENAI_BASE_URL.to_owned());
            return Some(Provider::OpenAi {
                base_url,
                api_key,
                model,
            });
        }
        var("ANTHROPIC_API_KEY").map(|api_key| Provider::Anthropic {
            api_key,
            model: var("ANTHROPIC_MODEL").unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.to_owned()),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            Provider::OpenAi {
                base_url, model, ..
            } => format!("{model} at {base_url}"),
            Provider::Anthropic { model, .. } => format!("{model} (Anthropic)"),
        }
    }
}

fn confirmation_note(tool_use_id: &str, confirm_id: &str, content: &str) -> String {
    format!(
        "[Confirmation outcome, page data] The deferred confirmation {confirm_id} requested by your tool call {tool_use_id} ended with:\n{content}"
    )
}

/// The chat completions request for one step.
pub fn openai_request(model: &str, history: &[Message], tools: &[ToolDef]) -> Value {
    let mut messages = vec![json!({ "role": "system", "content": SYSTEM_PROMPT })];
    for message in history {
        messages.push(match message {
            Message::User { text } => json!({ "role": "user", "content": text }),
            Message::Assistant { text, tool_uses } => {
                let mut entry = json!({ "role": "assistant", "content": text });
                if !tool_uses.is_empty() {
                    let calls: Vec<Value> = tool_uses
                        .iter()
                        .map(|used| {
                            json!({ "id": used.id, "type": "function", "function": { "name": used.name, "arguments": used.input.to_string() } })
                        })
                        .collect();
                    entry["tool_calls"] = Value::Array(calls);
                }
                entry
            }
            Message::ToolResult {
                tool_use_id,
                confirm_id: None,
                content,
            } => json!({ "role": "tool", "tool_call_id": tool_use_id, "content": content }),
            Message::ToolResult {
                tool_use_id,
                confirm_id: Some(confirm_id),
                content,
            } => json!({ "role": "user", "content": confirmation_note(tool_use_id, confirm_id, content) }),
        });
    }
    let mut request = json!({ "model": model, "messages": messages });
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| {
                json!({ "type": "function", "function": { "name": tool.name, "description": tool.description, "parameters": tool.input_schema } })
            })
            .collect();
        request["tools"] = Value::Array(tools);
    }
    request
}

/// A chat completions response as one step's reply.
pub fn openai_reply(response: &Value) -> Option<Reply> {
    let message = response.get("choices")?.get(0)?.get("message")?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned);
    let tool_uses = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|call| {
                    let function = call.get("function");
                    let arguments = function
                        .and_then(|f| f.get("arguments"))
                        .and_then(Value::as_str)
                        .and_then(|text| serde_json::from_str(text).ok())
                        .unwrap_or(Value::Null);
                    ToolUse {
                        id: call
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        name: function
                            .and_then(|f| f.get("name"))
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        input: arguments,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Reply { text, tool_uses })
}

/// The Messages API request for one step.
pub fn anthropic_request(model: &str, history: &[Message], tools: &[ToolDef]) -> Value {
    let messages: Vec<Value> = history
        .iter()
        .map(|message| match message {
            Message::User { text } => json!({ "role": "user", "content": text }),
            Message::Assistant { text, tool_uses } => {
                let mut blocks = Vec::new();
                if let Some(text) = text {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for used in tool_uses {
                    blocks.push(json!({ "type": "tool_use", "id": used.id, "name": used.name, "input": used.input }));
                }
                json!({ "role": "assistant", "content": blocks })
            }
            Message::ToolResult {
                tool_use_id,
                confirm_id: None,
                content,
            } => json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": tool_use_id, "content": content }] }),
            Message::ToolResult {
                tool_use_id,
                confirm_id: Some(confirm_id),
                content,
            } => json!({ "role": "user", "content": confirmation_note(tool_use_id, confirm_id, content) }),
        })
        .collect();
    let mut request = json!({ "model": model, "max_tokens": MAX_TOKENS, "system": SYSTEM_PROMPT, "messages": messages });
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| json!({ "name": tool.name, "description": tool.description, "input_schema": tool.input_schema }))
            .collect();
        request["tools"] = Value::Array(tools);
    }
    request
}

/// A Messages API response as one step's reply.
pub fn anthropic_reply(response: &Value) -> Option<Reply> {
    let blocks = response.get("content")?.as_array()?;
    let mut texts = Vec::new();
    let mut tool_uses = Vec::new();
    for block in blocks {
        let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
        match field("type") {
            "text" => texts.push(field("text").to_owned()),
            "tool_use" => tool_uses.push(ToolUse {
                id: field("id").to_owned(),
                name: field("name").to_owned(),
                input: block.get("input").cloned().unwrap_or(Value::Null),
            }),
            _ => {}
        }
    }
    let text = Some(texts.join("\n")).filter(|text| !text.trim().is_empty());
    Some(Reply { text, tool_uses })
}

/// The agent that asks the configured provider for every step.
pub struct ModelAgent {
    client: Arc<ModelClient>,
}

struct ModelClient {
    provider: Provider,
    http: ureq::Agent,
}

impl ModelAgent {
    pub fn new(provider: Provider) -> Self {
        let http = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            client: Arc::new(ModelClient { provider, http }),
        }
    }
}

impl ModelClient {
    fn step(&self, history: &[Message], tools: &[ToolDef]) -> Result<Reply, String> {
        let (request, body) = match &self.provider {
            Provider::OpenAi {
                base_url,
                api_key,
                model,
            } => {
                let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
                let request = self
                    .http
                    .post(&url)
                    .header("Authorization", &format!("Bearer {api_key}"))
                    .header("Content-Type", "application/json");
                (request, openai_request(model, history, tools))
            }
            Provider::Anthropic { api_key, model } => {
                let request = self
                    .http
                    .post(ANTHROPIC_URL)
                    .header("x-api-key", api_key)
                    .header("anthropic-version", "2023-06-01")
                    .header("Content-Type", "application/json");
                (request, anthropic_request(model, history, tools))
            }
        };
        let mut response = request
            .send(body.to_string())
            .map_err(|error| error.to_string())?;
        let status = response.status();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|error| error.to_string())?;
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let value: Value =
            serde_json::from_str(&text).map_err(|_| "reply is not JSON".to_owned())?;
        let reply = match self.provider {
            Provider::OpenAi { .. } => openai_reply(&value),
            Provider::Anthropic { .. } => anthropic_reply(&value),
        };
        reply.ok_or_else(|| "reply has no message".to_owned())
    }
}

impl Agent for ModelAgent {
    fn next<'a>(&'a self, history: &'a [Message], tools: &'a [ToolDef]) -> AgentFuture<'a> {
        let agent = Arc::clone(&self.client);
        let history = history.to_vec();
        let tools = tools.to_vec();
        Box::pin(async move {
            let step = tokio::task::spawn_blocking(move || agent.step(&history, &tools)).await;
            match step {
                Ok(Ok(reply)) => reply,
                Ok(Err(error)) => {
                    eprintln!("toolmark: model request failed: {error}");
                    Reply {
                        text: Some("I could not reach the model, so I stopped.".to_owned()),
                        tool_uses: Vec::new(),
                    }
                }
                Err(_) => Reply {
                    text: Some("I could not reach the model, so I stopped.".to_owned()),
                    tool_uses: Vec::new(),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::page_tools;

    fn history() -> Vec<Message> {
        vec![
            Message::User {
                text: "sign me up as ada@example.com".into(),
            },
            Message::Assistant {
                text: None,
                tool_uses: vec![ToolUse {
                    id: "call_1".into(),
                    name: "page_call".into(),
                    input: json!({ "tool": "signup.submit", "input": {} }),
                }],
            },
            Message::ToolResult {
                tool_use_id: "call_1".into(),
                confirm_id: None,
                content: r#"{"status":"needs_confirmation","confirmId":"k1","summary":"Submit"}"#
                    .into(),
            },
            Message::ToolResult {
                tool_use_id: "call_1".into(),
                confirm_id: Some("k1".into()),
                content: r#"{"untrustedContent":true}"#.into(),
            },
        ]
    }

    #[test]
    fn openai_mapping() {
        let tools = page_tools(None);
        let request = openai_request("m", &history(), &tools);
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(
            messages[2]["tool_calls"][0]["function"],
            json!({ "name": "page_call", "arguments": r#"{"tool":"signup.submit","input":{}}"# })
        );
        assert_eq!(messages[3]["role"], "tool");
        assert_eq!(messages[3]["tool_call_id"], "call_1");
        assert_eq!(messages[4]["role"], "user");
        assert!(messages[4]["content"]
            .as_str()
            .unwrap_or("")
            .starts_with("[Confirmation outcome, page data]"));
        assert_eq!(
            request["tools"][0]["function"]["description"],
            tools[0].description.as_str()
        );
        assert_eq!(
            request["tools"][1]["function"]["parameters"],
            tools[1].input_schema
        );
        // An acknowledgement step offers no tools at all.
        assert!(openai_request("m", &history(), &[]).get("tools").is_none());

        let response = json!({ "choices": [{ "message": { "content": null, "tool_calls": [{ "id": "c2", "type": "function", "function": { "name": "page_describe", "arguments": "{\"tool\":\"signup.fill\"}" } }] } }] });
        let reply = openai_reply(&response).expect("reply");
        assert_eq!(reply.text, None);
        assert_eq!(reply.tool_uses[0].input, json!({ "tool": "signup.fill" }));
    }

    #[test]
    fn anthropic_mapping() {
        let tools = page_tools(None);
        let request = anthropic_request("m", &history(), &tools);
        assert_eq!(request["system"], SYSTEM_PROMPT);
        assert_eq!(request["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(
            request["messages"][2]["content"][0]["tool_use_id"],
            "call_1"
        );
        assert_eq!(request["tools"][0]["input_schema"], tools[0].input_schema);
        assert_eq!(request["tools"][0]["name"], "page_call");

        let response = json!({ "content": [{ "type": "text", "text": "Filling it in." }, { "type": "tool_use", "id": "t1", "name": "page_call", "input": { "tool": "signup.fill", "input": { "email": "ada@example.com" } } }] });
        let reply = anthropic_reply(&response).expect("reply");
        assert_eq!(reply.text.as_deref(), Some("Filling it in."));
        assert_eq!(reply.tool_uses[0].id, "t1");
    }
}
