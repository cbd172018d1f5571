//! Describe.

use super::*;

#[test]
fn describe_returns_the_full_entry_and_refuses_unknown_or_hidden_tools() {
    let mut page = Page::with_config(Config {
        policy: json!({"inapp": {"destructive": "hide"}}),
        ..Config::default()
    });
    let mut def = tool("form.fill");
    def.title = Some("Fill".into());
    def.input_schema = Some(SchemaSpec::Json(
        json!({"type": "object", "properties": {"email": {"type": "string"}}}),
    ));
    def.output_schema = Some(SchemaSpec::Json(json!({"type": "string"})));
    page.register(def);
    let mut hidden = tool("wipe");
    hidden.hints.destructive = Some(true);
    page.register(hidden);
    page.describe("d1", "form.fill");
    assert_eq!(
        page.result("d1"),
        json!({"status": "ok", "data": {"name": "form.fill", "llmName": "form__fill", "title": "Fill",
            "description": "The form.fill tool", "hints": {},
            "inputSchema": {"type": "object", "properties": {"email": {"type": "string"}}},
            "outputSchema": {"type": "string"}}})
    );
    page.describe("d2", "wipe");
    assert_eq!(
        page.result("d2"),
        json!({"status": "refused", "code": "unknown_tool", "message": "No such tool", "rev": 2})
    );
    page.call("c", "wipe", json!({}));
    assert_eq!(page.result("c")["code"], "unknown_tool");
    let tools = page
        .manifests()
        .last()
        .map(|m| m["tools"].clone())
        .unwrap_or_default();
    assert_eq!(
        tools.as_array().map(Vec::len),
        Some(1),
        "hidden tools are not in the manifest"
    );
    assert_eq!(
        page.tm.manifest(Caller::Human).len(),
        2,
        "the human still sees it"
    );
    // The full entries (WebMCP's tool list) are the describe results.
    let entries = page.tm.manifest_entries(Caller::Inapp);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].to_value(), page.result("d1")["data"]);
    assert_eq!(page.tm.manifest_entries(Caller::Human).len(), 2);
}
