//! The two published JSON Schemas (draft 2020-12), written once here
//! (minified: the build pretty-prints the emitted files): the
//! build emits them to `pkg/protocol/v1/*.json` and `protocolSchemas` returns
//! them at runtime. `validation.rs` compiles them for the crate's own
//! validator, which checks every message; the Node differential test (ajv
//! against `validateMessage`) holds the two validators to the same verdicts.

/// `@toolmark/bridge-wasm/protocol/v1/page-to-agent.json`.
pub const PAGE_TO_AGENT: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:toolmark:protocol:v1:page-to-agent","title":"Toolmark bridge protocol v1: page to agent","description":"Messages a page sends to the agent's server: manifest, changed, result, confirmed.","oneOf":[{"$ref":"#/$defs/manifest"},{"$ref":"#/$defs/changed"},{"$ref":"#/$defs/result"},{"$ref":"#/$defs/confirmed"}],"$defs":{"manifest":{"type":"object","required":["protocol","type","clientId","rev","tools"],"properties":{"protocol":{"const":1},"type":{"const":"manifest"},"clientId":{"$ref":"#/$defs/id"},"rev":{"$ref":"#/$defs/rev"},"tools":{"type":"array","items":{"$ref":"#/$defs/toolManifestSummary"}}},"additionalProperties":false},"changed":{"type":"object","required":["protocol","type","clientId","rev"],"properties":{"protocol":{"const":1},"type":{"const":"changed"},"clientId":{"$ref":"#/$defs/id"},"rev":{"$ref":"#/$defs/rev"}},"additionalProperties":false},"result":{"type":"object","required":["protocol","type","clientId","id","result"],"properties":{"protocol":{"const":1},"type":{"const":"result"},"clientId":{"$ref":"#/$defs/id"},"id":{"$ref":"#/$defs/id"},"result":{"$ref":"#/$defs/toolResult"}},"additionalProperties":false},"confirmed":{"type":"object","required":["protocol","type","clientId","confirmId","result"],"properties":{"protocol":{"const":1},"type":{"const":"confirmed"},"clientId":{"$ref":"#/$defs/id"},"confirmId":{"$ref":"#/$defs/id"},"result":{"$ref":"#/$defs/toolResult"}},"additionalProperties":false},"id":{"description":"A non-empty id (UUID v4 in practice).","type":"string","minLength":1},"rev":{"description":"A registry revision.","type":"integer","minimum":0},"issue":{"type":"object","required":["path","message"],"properties":{"path":{"type":"string"},"message":{"type":"string"}},"additionalProperties":false},"fieldChange":{"type":"object","required":["path"],"properties":{"path":{"type":"string"},"before":true,"after":true},"additionalProperties":false},"toolResult":{"type":"object","required":["status"],"properties":{"status":{"enum":["ok","invalid","refused","needs_confirmation","cancelled","error"]}},"oneOf":[{"$ref":"#/$defs/okResult"},{"$ref":"#/$defs/invalidResult"},{"$ref":"#/$defs/refusedResult"},{"$ref":"#/$defs/needsConfirmationResult"},{"$ref":"#/$defs/cancelledResult"},{"$ref":"#/$defs/errorResult"}]},"okResult":{"type":"object","required":["status"],"properties":{"status":{"const":"ok"},"data":true},"additionalProperties":false},"invalidResult":{"type":"object","required":["status","issues"],"properties":{"status":{"const":"invalid"},"issues":{"type":"array","items":{"$ref":"#/$defs/issue"}}},"additionalProperties":false},"refusedResult":{"type":"object","required":["status","code","message"],"properties":{"status":{"const":"refused"},"code":{"enum":["unknown_tool","stale","not_allowed","busy","undo_unavailable","confirmation_expired"]},"message":{"type":"string"},"rev":{"$ref":"#/$defs/rev"}},"additionalProperties":false,"if":{"properties":{"code":{"enum":["unknown_tool","stale"]}}},"then":{"required":["rev"]},"else":{"not":{"required":["rev"]}}},"needsConfirmationResult":{"type":"object","required":["status","confirmId","summary"],"properties":{"status":{"const":"needs_confirmation"},"confirmId":{"$ref":"#/$defs/id"},"summary":{"type":"string"},"changes":{"type":"array","items":{"$ref":"#/$defs/fieldChange"}}},"additionalProperties":false},"cancelledResult":{"type":"object","required":["status","by"],"properties":{"status":{"const":"cancelled"},"by":{"enum":["operator","signal","policy"]}},"additionalProperties":false},"errorResult":{"type":"object","required":["status","message"],"properties":{"status":{"const":"error"},"message":{"type":"string"}},"additionalProperties":false},"hints":{"type":"object","properties":{"readOnly":{"type":"boolean"},"consequential":{"type":"boolean"},"destructive":{"type":"boolean"},"untrustedContent":{"type":"boolean"}}},"toolManifestSummary":{"type":"object","required":["name","llmName","description","hints"],"properties":{"name":{"type":"string","pattern":"^[A-Za-z0-9_.-]{1,128}$"},"llmName":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"title":{"type":"string"},"description":{"type":"string"},"hints":{"$ref":"#/$defs/hints"},"mode":{"enum":["stepwise"]}}}}}"##;

/// `@toolmark/bridge-wasm/protocol/v1/agent-to-page.json`.
pub const AGENT_TO_PAGE: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:toolmark:protocol:v1:agent-to-page","title":"Toolmark bridge protocol v1: agent to page","description":"Messages the agent's server sends to a page: call, describe, cancel.","oneOf":[{"$ref":"#/$defs/call"},{"$ref":"#/$defs/describe"},{"$ref":"#/$defs/cancel"}],"$defs":{"call":{"type":"object","required":["protocol","type","clientId","id","tool","input"],"properties":{"protocol":{"const":1},"type":{"const":"call"},"clientId":{"$ref":"#/$defs/id"},"id":{"$ref":"#/$defs/id"},"rev":{"$ref":"#/$defs/rev"},"tool":{"type":"string","minLength":1},"input":true},"additionalProperties":false},"describe":{"type":"object","required":["protocol","type","clientId","id","tool"],"properties":{"protocol":{"const":1},"type":{"const":"describe"},"clientId":{"$ref":"#/$defs/id"},"id":{"$ref":"#/$defs/id"},"tool":{"type":"string","minLength":1}},"additionalProperties":false},"cancel":{"type":"object","required":["protocol","type","clientId","id"],"properties":{"protocol":{"const":1},"type":{"const":"cancel"},"clientId":{"$ref":"#/$defs/id"},"id":{"$ref":"#/$defs/id"}},"additionalProperties":false},"id":{"description":"A non-empty id (UUID v4 in practice).","type":"string","minLength":1},"rev":{"description":"A registry revision.","type":"integer","minimum":0}}}"##;

/// `page-to-agent.json`'s definitions of what a page hands in (`hints`,
/// `fieldChange`, `issue`), alone: the registry checks those values and no
/// page → agent message, so its module carries these and not the whole
/// schema. A unit test holds them equal to the published ones.
pub const PAGE_TO_AGENT_DEFINITIONS: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"hints":{"type":"object","properties":{"readOnly":{"type":"boolean"},"consequential":{"type":"boolean"},"destructive":{"type":"boolean"},"untrustedContent":{"type":"boolean"}}},"fieldChange":{"type":"object","required":["path"],"properties":{"path":{"type":"string"},"before":true,"after":true},"additionalProperties":false},"issue":{"type":"object","required":["path","message"],"properties":{"path":{"type":"string"},"message":{"type":"string"}},"additionalProperties":false}}}"##;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn schemas_are_json_with_the_spec_ids() {
        for (text, id) in [
            (PAGE_TO_AGENT, "urn:toolmark:protocol:v1:page-to-agent"),
            (AGENT_TO_PAGE, "urn:toolmark:protocol:v1:agent-to-page"),
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(value["$id"], id);
            assert_eq!(
                value["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
        }
    }

    #[test]
    fn the_definitions_are_the_published_ones() {
        let parse = |text| serde_json::from_str::<serde_json::Value>(text).unwrap_or_default();
        let (whole, part) = (parse(PAGE_TO_AGENT), parse(PAGE_TO_AGENT_DEFINITIONS));
        let names: Vec<&String> = part["$defs"]
            .as_object()
            .map(|defs| defs.keys().collect())
            .unwrap_or_default();
        assert_eq!(names, ["hints", "fieldChange", "issue"]);
        for name in names {
            assert_eq!(part["$defs"][name], whole["$defs"][name], "{name}");
        }
        assert_eq!(part["$schema"], whole["$schema"]);
        assert_eq!(part.as_object().map(|o| o.len()), Some(2));
    }
}
