//! The same behaviour inside WebAssembly, in real headless Chromium
//! (`wasm-pack test --headless --chrome`): ids come from crypto.getRandomValues.
#![cfg(target_arch = "wasm32")]

use serde_json::Value;
use toolmark_bridge::ids::{is_valid_tool_name, llm_name};
use toolmark_bridge::json_value;
use toolmark_bridge::protocol::*;
use toolmark_bridge::wasm;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(inline_js = "
let saved = null;
export function stub_random(byte) {
  saved = globalThis.crypto.getRandomValues;
  globalThis.__stubCalls = 0;
  globalThis.crypto.getRandomValues = (array) => {
    globalThis.__stubCalls++;
    array.fill(byte);
    return array;
  };
}
export function unstub_random() { globalThis.crypto.getRandomValues = saved; }
export function stub_calls() { return globalThis.__stubCalls; }
export function in_browser() { return typeof window === 'object' && typeof document === 'object'; }
export function doubling_tool() {
  return { name: 'double', description: 'Doubles n', hints: { readOnly: true }, run: (input) => ({ twice: input.n * 2 }) };
}
export function throwing_tool() {
  return { name: 'throws', description: 'Throws', run: () => { throw new Error('boom'); } };
}
export function human() { return { caller: 'human' }; }
export function input(n) { return { n }; }
export function field(value, key) { return value[key]; }
")]
extern "C" {
    fn stub_random(byte: u8);
    fn unstub_random();
    fn stub_calls() -> u32;
    fn in_browser() -> bool;
    fn doubling_tool() -> JsValue;
    fn throwing_tool() -> JsValue;
    fn human() -> JsValue;
    fn input(n: u32) -> JsValue;
    fn field(value: &JsValue, key: &str) -> JsValue;
}

fn is_uuid_v4(id: &str) -> bool {
    let bytes = id.as_bytes();
    id.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            14 => *b == b'4',
            19 => matches!(b, b'8' | b'9' | b'a' | b'b'),
            _ => b.is_ascii_hexdigit() && !b.is_ascii_uppercase(),
        })
}

#[wasm_bindgen_test]
fn runs_in_a_real_browser() {
    assert!(in_browser());
}

#[wasm_bindgen_test]
fn new_id_is_a_v4_uuid_and_unique() {
    let mut seen = std::collections::HashSet::new();
    for _ in 0..1000 {
        let id = wasm::new_id().unwrap_or_default();
        assert!(is_uuid_v4(&id), "{id}");
        assert!(seen.insert(id));
    }
}

#[wasm_bindgen_test]
fn new_id_takes_its_bytes_from_crypto_get_random_values() {
    // Ids draw from a 4096-byte pool (256 ids) refilled by one call: the
    // stub's bytes show once what earlier tests left in the pool is used up.
    const POOL_IDS: usize = 256;
    stub_random(0xab);
    let stubbed = "abababab-abab-4bab-abab-abababababab";
    let ids: Vec<String> = (0..=POOL_IDS)
        .map(|_| wasm::new_id().unwrap_or_default())
        .collect();
    let calls = stub_calls();
    unstub_random();
    assert!(ids.iter().any(|id| id == stubbed), "{ids:?}");
    assert!(calls >= 1);
    // Drain the stubbed pool: the ids after it are random again.
    let after: Vec<String> = (0..=POOL_IDS)
        .map(|_| wasm::new_id().unwrap_or_default())
        .collect();
    assert_ne!(after.last().map(String::as_str), Some(stubbed));
}

#[wasm_bindgen_test]
fn llm_name_matches_native() {
    assert_eq!(llm_name("signup.fill"), "signup__fill");
    assert_eq!(
        llm_name("billing.invoices.line_items.adjustments.create_with_a_really_long_name"),
        "billing__invoices__line_items__adjustments__create_with_14142769"
    );
    assert!(is_valid_tool_name("signup.fill"));
}

const CALL: &str = r#"{"protocol":1,"type":"call","clientId":"p","id":"i","rev":2,"tool":"t","input":{"a":[1,2.5,"é"]}}"#;

/// JSON text read inside WebAssembly (`json_value::parse`, serde_json
/// without `float_roundtrip`): correctly rounded floats (expected values
/// parsed by rustc), a lone surrogate is an error, the nesting limit.
#[wasm_bindgen_test]
fn json_reading_in_wasm() {
    let float = |text: &str| {
        json_value::parse(text)
            .ok()
            .and_then(|v| v.as_f64())
            .map(f64::to_bits)
    };
    for (text, want) in [
        ("0.1", 0.1f64),
        ("0.30000000000000004", 0.300_000_000_000_000_04),
        (
            "1.00000000000000011102230246251565404236316680908203125",
            1.0,
        ),
        (
            "1.000000000000000111022302462515654042363166809082031251",
            1.000_000_000_000_000_2,
        ),
        ("2.4703282292062328e-324", 5e-324),
        ("1.7976931348623158e308", f64::MAX),
        ("18446744073709551616", 18_446_744_073_709_551_616.0),
        ("-1e-400", -0.0),
    ] {
        assert_eq!(float(text), Some(want.to_bits()), "{text}");
    }
    assert!(json_value::parse("1e400").is_err());
    assert!(json_value::parse(r#""\ud800\ud83d\ude00""#).is_err());
    assert_eq!(
        json_value::parse(r#""\ud83d\ude00""#).ok(),
        Some(Value::from("\u{1f600}"))
    );
    assert_eq!(
        json_value::parse(&"[".repeat(200)).map_err(|e| e.to_string()),
        Err("recursion limit exceeded at line 1 column 128".to_string())
    );
}

/// Every number read equals the page's `JSON.parse` of the same text, bit
/// for bit: the doubles of 100,000 random bit patterns, each written by
/// JS (`String(x)`, shortest), with 17 and with 20 significant digits,
/// and integers past 2^53.
#[wasm_bindgen_test]
fn numbers_read_as_json_parse_reads_them() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut texts = Vec::new();
    while texts.len() < 300_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = f64::from_bits(x);
        if !f.is_finite() {
            continue;
        }
        texts.push(String::from(
            js_sys::Number::from(f)
                .to_string_with_radix(10)
                .expect("radix 10"),
        ));
        texts.push(format!("{f:.16e}"));
        texts.push(format!("{f:.19e}"));
    }
    texts.extend((0..1000u64).map(|i| (9_007_199_254_740_993 + i * 1_000_000_007).to_string()));
    for chunk in texts.chunks(5000) {
        let text = format!("[{}]", chunk.join(","));
        let ours = json_value::parse(&text).expect("an array of numbers");
        let ours = ours.as_array().expect("array");
        let theirs = js_sys::Array::from(&js_sys::JSON::parse(&text).expect("JSON.parse"));
        // Every number of the text read, so that each is compared below.
        assert_eq!(ours.len(), chunk.len());
        assert_eq!(theirs.length() as usize, chunk.len());
        for (i, number) in ours.iter().enumerate() {
            let want = theirs.get(i as u32).as_f64().expect("a number");
            assert_eq!(
                number.as_f64().map(f64::to_bits),
                Some(want.to_bits()),
                "{}",
                chunk[i]
            );
        }
    }
}

#[wasm_bindgen_test]
fn inbound_parsing_in_wasm() {
    let Ok(AgentToPage::Call(call)) = parse_agent_to_page(CALL, DEFAULT_MAX_MESSAGE_BYTES) else {
        panic!("call should parse")
    };
    assert_eq!(call.rev, Some(2));
    assert_eq!(call.input.as_str(), r#"{"a":[1,2.5,"é"]}"#);
    assert!(matches!(
        parse_agent_to_page(CALL, CALL.len() - 1),
        Err(Rejection::TooLarge { .. })
    ));
    let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
    assert_eq!(
        parse_agent_to_page(&deep, DEFAULT_MAX_MESSAGE_BYTES),
        Err(Rejection::TooDeep { limit: 64 })
    );
    // A megabyte of brackets: no recursion, no stack overflow, no trap.
    let brackets = "[".repeat(DEFAULT_MAX_MESSAGE_BYTES);
    assert!(parse_agent_to_page(&brackets, DEFAULT_MAX_MESSAGE_BYTES).is_err());
    assert!(matches!(
        parse_agent_to_page("{\"protocol\":", DEFAULT_MAX_MESSAGE_BYTES),
        Err(Rejection::Malformed { .. })
    ));
    assert_eq!(
        parse_agent_to_page(
            &CALL.replace("\"protocol\":1", "\"protocol\":2"),
            DEFAULT_MAX_MESSAGE_BYTES
        ),
        Err(Rejection::UnsupportedProtocol {
            id: Some("i".into()),
            client_id: Some("p".into())
        })
    );
    assert!(matches!(
        parse_agent_to_page(
            &CALL.replace("\"call\"", "\"result\""),
            DEFAULT_MAX_MESSAGE_BYTES
        ),
        Err(Rejection::WrongDirection { .. })
    ));
    assert!(matches!(
        parse_agent_to_page(
            &CALL.replace("\"rev\"", "\"extra\""),
            DEFAULT_MAX_MESSAGE_BYTES
        ),
        Err(Rejection::UnknownProperty { .. })
    ));
    assert!(matches!(
        parse_agent_to_page(
            &CALL.replace("\"rev\":2", "\"rev\":-2"),
            DEFAULT_MAX_MESSAGE_BYTES
        ),
        Err(Rejection::Invalid { .. })
    ));
}

/// `validateMessage`'s core on a message's JSON text: `None` when valid,
/// else the errors' JSON text.
fn validate_text(text: &str, direction: &str) -> Result<Option<String>, &'static str> {
    let direction = Direction::parse(direction).ok_or(BAD_DIRECTION)?;
    Ok(validate_written(Written::Text(text), direction)
        .err()
        .map(|issues| serde_json::to_string(&issues).unwrap_or_default()))
}

#[wasm_bindgen_test]
fn validate_message_in_wasm() {
    assert_eq!(validate_text(CALL, "toPage").ok(), Some(None));
    let errors = validate_text(CALL, "toAgent")
        .ok()
        .flatten()
        .unwrap_or_default();
    assert!(errors.contains("\"path\":\"type\""), "{errors}");
    assert!(validate_text(CALL, "sideways").is_err());
    let errors = validate_text("not json", "toPage")
        .ok()
        .flatten()
        .unwrap_or_default();
    assert!(errors.contains("malformed JSON"), "{errors}");
}

#[wasm_bindgen_test]
fn every_pattern_runs_in_linear_time_or_is_refused() {
    use toolmark_bridge::schema::pattern::LinearPatterns;
    use toolmark_bridge::schema::PatternMatcher;
    let matcher = LinearPatterns::new();
    let hostile = format!("{}!", "a".repeat(40));
    assert_eq!(matcher.is_match("^(a+)+$", &hostile), Ok(false));
    assert_eq!(
        matcher.is_match("^(?=.*[A-Z])(?=.*\\d).{8,}$", "Passw0rd"),
        Ok(true)
    );
    assert_eq!(
        matcher.is_match("(?=.*[A-Z])(?=.*\\d)", "a\nA\n1"),
        Ok(false)
    );
    assert!(matcher.is_match("(?<=\\$)\\d+", "cost: $42").is_err());
    assert!(matcher.is_match("^(\\p{L}+\\s?)+$", "Élan").is_err());
    assert!(matcher.is_match("(", "x").is_err());
    assert!(matcher.is_match("a**", "x").is_err());
}

/// `\p{…}` as the page's `RegExp` enumerates it, in linear time.
#[wasm_bindgen_test]
fn property_escapes_come_from_the_pages_regexp() {
    use toolmark_bridge::schema::pattern::LinearPatterns;
    use toolmark_bridge::schema::PatternMatcher;
    let matcher = LinearPatterns::with_properties(Box::new(wasm::HostProperties));
    let hostile = format!("{}!", "é".repeat(10_000));
    assert_eq!(matcher.is_match("^(\\p{L}+\\s?)+$", &hostile), Ok(false));
    assert_eq!(matcher.is_match("^(\\p{L}+\\s?)+$", "Élan vital"), Ok(true));
    assert_eq!(matcher.is_match("^[\\p{sc=Greek}\\d]+$", "αβ12"), Ok(true));
    assert_eq!(matcher.is_match("^\\P{Letter}+$", "٣ 🐲"), Ok(true));
    assert_eq!(
        matcher.is_match("^[^\\p{White_Space}]+$", "a\u{3000}b"),
        Ok(false)
    );
    assert_eq!(matcher.is_match("^\\p{Emoji}$", "🐲"), Ok(true));
    assert_eq!(
        matcher.is_match("\\p{Nope}", ""),
        Err("\\p{Nope} is not a Unicode property this host's RegExp knows (u flag)".into())
    );
    // Valid with the `v` flag only.
    assert!(matcher.is_match("\\p{RGI_Emoji}", "").is_err());
}

/// The suite's optional groups whose schema has a pattern the shipped
/// matcher refuses (registration refuses such a schema).
const REFUSED_OPTIONAL_REGEX_GROUPS: &[&str] = &[];

/// The suite's optional ECMA-262 regex cases with the shipped module's
/// matcher: every case of a schema it takes is decided as the suite says.
#[wasm_bindgen_test]
fn optional_ecma_regex_cases_in_the_browser() {
    use toolmark_bridge::schema::pattern::LinearPatterns;
    use toolmark_bridge::schema::{CompiledSchema, PatternMatcher};
    let matcher = LinearPatterns::with_properties(Box::new(wasm::HostProperties));
    let files = [
        include_str!("data/json-schema-test-suite/draft2020-12/optional/ecmascript-regex.json"),
        include_str!("data/json-schema-test-suite/draft2020-12/optional/non-bmp-regex.json"),
    ];
    let mut passed = 0;
    let mut failed = Vec::new();
    let mut refused = Vec::new();
    for text in files {
        let groups: Vec<Value> = serde_json::from_str(text).unwrap_or_default();
        for group in &groups {
            let description = group["description"].as_str().unwrap_or_default().to_owned();
            let schema =
                CompiledSchema::compile(&group["schema"]).unwrap_or_else(|e| panic!("{e}"));
            if schema.patterns().any(|p| matcher.is_match(p, "").is_err()) {
                refused.push(description);
                continue;
            }
            for case in group["tests"].as_array().into_iter().flatten() {
                let valid = schema.is_valid(&case["data"], &matcher);
                if Some(valid) == case["valid"].as_bool() {
                    passed += 1;
                } else {
                    let test = case["description"].as_str().unwrap_or_default().to_owned();
                    failed.push((description.clone(), test));
                }
            }
        }
    }
    assert_eq!(failed, Vec::<(String, String)>::new());
    assert_eq!(refused, REFUSED_OPTIONAL_REGEX_GROUPS);
    assert_eq!(passed, 86);
}

#[wasm_bindgen_test]
fn the_core_runs_in_wasm_with_crypto_ids_and_linear_patterns() {
    use toolmark_bridge::machine::{BridgeOptions, Config, Output, Toolmark};
    use toolmark_bridge::registry::{SchemaSpec, ScopeId, ToolDef};
    let core = || {
        Toolmark::new(
            Config::default(),
            Box::new(wasm::CryptoRandom),
            Box::new(toolmark_bridge::schema::pattern::LinearPatterns::new()),
        )
        .unwrap_or_else(|_| panic!("core"))
    };
    let mut tm = core();
    let client_id = tm.client_id().to_owned();
    assert!(is_uuid_v4(&client_id), "{client_id}");
    // Random: another core has another client id.
    assert_ne!(core().client_id(), client_id);
    let mut def = ToolDef::new("signup.fill", "Fill");
    def.input_schema = Some(SchemaSpec::Json(
        serde_json::from_str::<Value>(r#"{"type":"object","properties":{"email":{"type":"string","pattern":"^[^@]+@[^@]+$"}}}"#)
            .unwrap_or_default(),
    ));
    assert!(matches!(tm.register(ScopeId::ROOT, def, 1), Ok(Some(_))));
    let bridge = tm.attach(BridgeOptions::default());
    let call = format!(
        r#"{{"protocol":1,"type":"call","clientId":"{client_id}","id":"c1","tool":"signup.fill","input":{{"email":"nope"}}}}"#
    );
    tm.handle_inbound(bridge, &call, 2);
    let mut sent = Vec::new();
    while let Output::Transmit(t) = tm.poll_output() {
        sent.push(t.text);
    }
    assert_eq!(sent.len(), 2, "manifest, then the result: {sent:?}");
    let result = serde_json::from_str::<Value>(&sent[1]).unwrap_or_default();
    assert_eq!(
        result["result"].to_string(),
        r#"{"status":"invalid","issues":[{"path":"email","message":"must match pattern \"^[^@]+@[^@]+$\""}]}"#
    );
}
/// The registry class in a real page: a JS tool run by the Rust driver
/// (promise, AbortController, the page's setTimeout), and a throwing one
/// answered as "Tool failed".
#[wasm_bindgen_test]
async fn the_registry_drives_page_tools_in_the_browser() {
    let tm = wasm::create_toolmark(JsValue::UNDEFINED).unwrap_or_else(|_| panic!("registry"));
    assert!(tm.register(doubling_tool()).is_ok());
    assert!(tm.register(throwing_tool()).is_ok());
    assert_eq!(tm.rev().ok(), Some(2.0));
    let call = tm
        .call("double".into(), input(21), human())
        .unwrap_or_else(|_| panic!("call"));
    let result = wasm_bindgen_futures::JsFuture::from(call)
        .await
        .unwrap_or_default();
    assert_eq!(field(&result, "status").as_string().as_deref(), Some("ok"));
    assert_eq!(field(&field(&result, "data"), "twice").as_f64(), Some(42.0));
    let call = tm
        .call("throws".into(), input(0), human())
        .unwrap_or_else(|_| panic!("call"));
    let result = wasm_bindgen_futures::JsFuture::from(call)
        .await
        .unwrap_or_default();
    assert_eq!(
        field(&result, "message").as_string().as_deref(),
        Some("Tool failed")
    );
}
