//! Manifest.

use super::*;

#[test]
fn manifest_on_attach_may_be_empty() {
    let page = Page::new();
    assert_eq!(
        page.sent,
        vec![
            json!({"type": "manifest", "protocol": 1, "clientId": page.client_id(), "rev": 0, "tools": []})
        ]
    );
}

#[test]
fn manifest_on_every_revision_sorted_by_name() {
    let mut page = Page::new();
    page.register(tool("b.tool"));
    let key = page.register(consequential("a.tool"));
    page.tm.unregister(key, page.now);
    page.drain();
    let revs: Vec<u64> = page
        .manifests()
        .iter()
        .map(|m| m["rev"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(revs, [0, 1, 2, 3]);
    let manifests = page.manifests();
    let names: Vec<&str> = manifests[2]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["a.tool", "b.tool"]);
    assert_eq!(
        page.manifests()[2]["tools"][0],
        json!({"name": "a.tool", "llmName": "a__tool", "description": "The a.tool tool",
               "hints": {"consequential": true}})
    );
    assert_eq!(page.tm.rev(), 3);
}

#[test]
fn changed_mode_sends_changed_instead_of_manifest() {
    let mut page = Page::with_options(
        Config::default(),
        BridgeOptions {
            on_change: OnChange::Changed,
            ..BridgeOptions::default()
        },
    );
    page.register(tool("x"));
    assert_eq!(page.sent.len(), 2);
    assert_eq!(
        page.sent[0]["type"], "manifest",
        "attach still sends a manifest"
    );
    assert_eq!(
        page.sent[1],
        json!({"type": "changed", "protocol": 1, "clientId": page.client_id(), "rev": 1})
    );
}

#[test]
fn a_bridge_attached_after_registration_gets_a_manifest_of_the_tools_already_registered() {
    let mut page = Page::new();
    page.tm.detach(page.bridge, page.now);
    page.drain();
    page.register(tool("early"));
    page.register(consequential("also.early"));
    let later = page.attach(BridgeOptions::default());
    assert_eq!(
        page.sent_on(later),
        [
            json!({"type": "manifest", "protocol": 1, "clientId": page.client_id(), "rev": 2,
            "tools": [
                {"name": "also.early", "llmName": "also__early",
                 "description": "The also.early tool", "hints": {"consequential": true}},
                {"name": "early", "llmName": "early", "description": "The early tool",
                 "hints": {}}
            ]})
        ],
        "one manifest, at the current revision, listing what is registered"
    );
}
