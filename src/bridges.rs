//! The page's bridges: which are attached and with what options, the
//! `clientId` filter (rule 1) and the page's answered-id memory (rule 2: one
//! per page, shared by all its bridges).
//!
//! No IO: the machine asks, this module answers and remembers.

use hashbrown::HashSet;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::given::Given;
use crate::prelude::*;
use crate::protocol::DEFAULT_MAX_MESSAGE_BYTES;
use crate::transport::status::{Status, StatusWatch};

/// Spec: the last 1000 answered call/describe ids are remembered.
pub const ANSWERED_ID_MEMORY: usize = 1000;

/// `onChange` of a bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OnChange {
    Manifest,
    Changed,
}

/// Options of `bridge(...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeOptions {
    pub on_change: OnChange,
    pub max_message_bytes: usize,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        BridgeOptions {
            on_change: OnChange::Manifest,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// A call of the app's transport that threw (or whose promise rejected).
/// `send`, `close`, `onStatus` and the unsubscribes failing are
/// `transport_failed` events; `onMessage` failing at attach is thrown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportCall {
    Send,
    Close,
    /// Reading `transport.status` (a getter may throw).
    Status,
    OnStatus,
    OnMessage,
    /// What `onStatus` returned, called when the bridge closes.
    OnStatusUnsubscribe,
    /// What `onMessage` returned, called when the bridge closes.
    OnMessageUnsubscribe,
}

impl TransportCall {
    /// The failure's text, with the error as the boundary describes it
    /// (`detail`: `Error: message`).
    pub fn failed(self, detail: &str) -> String {
        let call = match self {
            TransportCall::Send => "transport.send",
            TransportCall::Close => "transport.close",
            TransportCall::Status => "bridge: reading transport.status",
            TransportCall::OnStatus => "bridge: transport.onStatus",
            TransportCall::OnMessage => "bridge: transport.onMessage",
            TransportCall::OnStatusUnsubscribe => "bridge: unsubscribing from transport.onStatus",
            TransportCall::OnMessageUnsubscribe => "bridge: unsubscribing from transport.onMessage",
        };
        format!("{call} failed: {detail}")
    }
}

/// The `bridge(...)` option [`BridgeOptions::from_given`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedOption {
    /// `transport` lacks `send` or `onMessage` as functions.
    Transport,
    Caller,
    OnChange,
    MaxMessageBytes,
}

impl RefusedOption {
    /// The refusal, showing the value as `JSON.stringify` wrote it
    /// (`undefined` for none): only the refused value is ever written.
    pub fn message(self, shown: &str) -> String {
        let rule = match self {
            RefusedOption::Transport => {
                return String::from(
                    "bridge: transport must have send(message) and onMessage(callback)",
                )
            }
            RefusedOption::Caller => "bridge: caller must be 'inapp' in protocol v1, not ",
            RefusedOption::OnChange => "bridge: onChange must be 'manifest' or 'changed', not ",
            RefusedOption::MaxMessageBytes => {
                "bridge: maxMessageBytes must be a positive integer, not "
            }
        };
        let mut message = String::from(rule);
        message.push_str(shown);
        message
    }
}

impl BridgeOptions {
    /// A transport with `send` and `onMessage` functions, `caller` absent
    /// or `'inapp'`, `onChange` absent, `'manifest'` or `'changed'`,
    /// `maxMessageBytes` absent or a positive integer; the first refused,
    /// in that order, is the `Err`.
    pub fn from_given(
        transport: [&Given; 2],
        caller: &Given,
        on_change: &Given,
        max_message_bytes: &Given,
    ) -> Result<BridgeOptions, RefusedOption> {
        if !matches!(transport, [Given::Function, Given::Function]) {
            return Err(RefusedOption::Transport);
        }
        match caller {
            Given::Undefined => {}
            Given::Text(text) if text == "inapp" => {}
            _ => return Err(RefusedOption::Caller),
        }
        let on_change = match on_change {
            Given::Undefined => OnChange::Manifest,
            Given::Text(text) if text == "manifest" => OnChange::Manifest,
            Given::Text(text) if text == "changed" => OnChange::Changed,
            _ => return Err(RefusedOption::OnChange),
        };
        let max = match *max_message_bytes {
            Given::Undefined => DEFAULT_MAX_MESSAGE_BYTES,
            // `as` saturates: a whole number past usize::MAX is usize::MAX.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Given::Number(n) if n >= 1.0 && crate::schema::is_whole(n) => n as usize,
            _ => return Err(RefusedOption::MaxMessageBytes),
        };
        Ok(BridgeOptions {
            on_change,
            max_message_bytes: max,
        })
    }
}

/// An attached bridge (one transport).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct BridgeId(pub u32);

/// The page's bridges and what they share: its `clientId` and the
/// answered-id memory.
#[derive(Debug)]
pub struct Bridges {
    client_id: String,
    /// Attached bridges in id order (ids only grow), so they are told of a
    /// new revision in that order without a sort.
    attached: Vec<(BridgeId, BridgeOptions)>,
    next: u32,
    answered: AnsweredIds,
    /// The connection state each bridge's transport last reported.
    statuses: Vec<(BridgeId, StatusWatch)>,
}

impl Bridges {
    pub fn new(client_id: String) -> Bridges {
        Bridges {
            client_id,
            attached: Vec::new(),
            next: 0,
            answered: AnsweredIds::new(ANSWERED_ID_MEMORY),
            statuses: Vec::new(),
        }
    }

    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// Attaches a bridge under the next id. Only once the ids have run out
    /// (saturated) is an id taken again: that bridge's options are replaced.
    pub fn attach(&mut self, options: BridgeOptions) -> BridgeId {
        let id = BridgeId(self.next);
        self.next = self.next.saturating_add(1);
        match self.attached.iter_mut().find(|(b, _)| *b == id) {
            Some(slot) => slot.1 = options,
            None => self.attached.push((id, options)),
        }
        id
    }

    /// Detaches a bridge; false when it was not attached.
    pub fn detach(&mut self, bridge: BridgeId) -> bool {
        let before = self.attached.len();
        self.attached.retain(|(b, _)| *b != bridge);
        self.statuses.retain(|(b, _)| *b != bridge);
        self.attached.len() != before
    }

    pub fn options(&self, bridge: BridgeId) -> Option<BridgeOptions> {
        self.attached
            .iter()
            .find(|(b, _)| *b == bridge)
            .map(|(_, options)| *options)
    }

    pub fn contains(&self, bridge: BridgeId) -> bool {
        self.options(bridge).is_some()
    }

    /// The attached bridges in id order, with their `onChange`.
    pub fn attached(&self) -> Vec<(BridgeId, OnChange)> {
        self.attached
            .iter()
            .map(|(b, options)| (*b, options.on_change))
            .collect()
    }

    /// A connection state the bridge's transport reported: `None` when the
    /// bridge is not attached, else the text of a `transport_failed` error
    /// event if the state ends an attempt that never opened.
    pub fn observe_status(&mut self, bridge: BridgeId, status: &Status) -> Option<Option<String>> {
        if !self.contains(bridge) {
            return None;
        }
        if let Some((_, watch)) = self.statuses.iter_mut().find(|(b, _)| *b == bridge) {
            return Some(watch.observe(status));
        }
        let mut watch = StatusWatch::default();
        let failed = watch.observe(status);
        self.statuses.push((bridge, watch));
        Some(failed)
    }

    /// Rule 2: the id is among the page's last 1000 answered ids.
    pub fn was_answered(&self, id: &IdKey) -> bool {
        self.answered.contains(id)
    }

    /// Remembers an answered id.
    pub fn answered(&mut self, id: &str) {
        self.answered.insert(id);
    }

    pub fn answered_ids(&self) -> &AnsweredIds {
        &self.answered
    }
}

/// Ids up to this many bytes are remembered as they are; longer ones by
/// their SHA-256 digest (an id's size is bounded only by the message's).
pub const SHORT_ID_BYTES: usize = 64;

/// How an id is remembered: a fixed-size value (no heap of its own), the
/// id itself when short, else its 256-bit digest. The two kinds never
/// compare equal, so a short id cannot meet a long one's digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKey {
    Short {
        len: u8,
        bytes: [u8; SHORT_ID_BYTES],
    },
    Digest([u8; 32]),
}

impl IdKey {
    pub fn of(id: &str) -> IdKey {
        let text = id.as_bytes();
        let mut bytes = [0; SHORT_ID_BYTES];
        match (bytes.get_mut(..text.len()), u8::try_from(text.len())) {
            (Some(prefix), Ok(len)) => {
                prefix.copy_from_slice(text);
                IdKey::Short { len, bytes }
            }
            _ => IdKey::Digest(Sha256::digest(text).into()),
        }
    }
}

/// Rule 2's answered-id memory: the last `capacity` ids, each an [`IdKey`]
/// (fixed size, whatever the ids' length), found in O(1) by a hash set and
/// forgotten oldest first from a ring in insertion order (a `Vec` and the
/// index of its oldest key once full: smaller code than `VecDeque`'s).
#[derive(Debug)]
pub struct AnsweredIds {
    known: HashSet<IdKey>,
    order: Vec<IdKey>,
    oldest: usize,
    capacity: usize,
}

impl AnsweredIds {
    pub fn new(capacity: usize) -> AnsweredIds {
        AnsweredIds {
            known: HashSet::new(),
            order: Vec::new(),
            oldest: 0,
            capacity,
        }
    }

    pub fn contains(&self, id: &IdKey) -> bool {
        self.known.contains(id)
    }

    /// Remembers an id, forgetting the oldest when full (a known id stays
    /// where it is).
    pub fn insert(&mut self, id: &str) {
        let key = IdKey::of(id);
        if self.capacity == 0 || self.known.contains(&key) {
            return;
        }
        if self.order.is_empty() {
            // Full size at once: the memory never rehashes or grows.
            self.known.reserve(self.capacity);
            self.order.reserve_exact(self.capacity);
        }
        self.known.insert(key);
        if self.order.len() < self.capacity {
            self.order.push(key);
        } else if let Some(slot) = self.order.get_mut(self.oldest) {
            let forgotten = core::mem::replace(slot, key);
            self.known.remove(&forgotten);
            self.oldest = (self.oldest + 1) % self.capacity;
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Bytes it holds: the set's buckets (a key and a control byte each)
    /// and the queue's keys.
    pub fn held_bytes(&self) -> usize {
        let key = core::mem::size_of::<IdKey>();
        // hashbrown's capacity is 7/8 of its power-of-two bucket count.
        let buckets = (self.known.capacity() * 8 / 7).next_power_of_two();
        buckets * (key + 1) + self.order.capacity() * key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::VecDeque;

    /// An option as the page gave it, with its `JSON.stringify` text.
    struct Shown {
        given: Given,
        json: String,
    }

    fn shown(given: Given, json: &str) -> Shown {
        Shown {
            given,
            json: String::from(json),
        }
    }

    fn text(text: &str) -> Shown {
        shown(Given::Text(String::from(text)), &format!("\"{text}\""))
    }

    fn number(n: f64, json: &str) -> Shown {
        shown(Given::Number(n), json)
    }

    fn absent() -> Shown {
        shown(Given::Undefined, "undefined")
    }

    /// The options, or the refusal's message as the boundary writes it.
    fn options(caller: &Shown, on_change: &Shown, max: &Shown) -> Result<BridgeOptions, String> {
        let send = &Given::Function;
        let transport = [send, send];
        BridgeOptions::from_given(transport, &caller.given, &on_change.given, &max.given).map_err(
            |refused| {
                let value = match refused {
                    RefusedOption::Transport => unreachable!("the transport is given"),
                    RefusedOption::Caller => caller,
                    RefusedOption::OnChange => on_change,
                    RefusedOption::MaxMessageBytes => max,
                };
                refused.message(&value.json)
            },
        )
    }

    fn max_bytes(max: &Shown) -> Result<usize, String> {
        options(&absent(), &absent(), max).map(|o| o.max_message_bytes)
    }

    #[test]
    fn a_failed_transport_call_is_named_with_the_error() {
        for (call, text) in [
            (TransportCall::Send, "transport.send failed: Error: e"),
            (TransportCall::Close, "transport.close failed: Error: e"),
            (
                TransportCall::Status,
                "bridge: reading transport.status failed: Error: e",
            ),
            (
                TransportCall::OnStatus,
                "bridge: transport.onStatus failed: Error: e",
            ),
            (
                TransportCall::OnMessage,
                "bridge: transport.onMessage failed: Error: e",
            ),
            (
                TransportCall::OnStatusUnsubscribe,
                "bridge: unsubscribing from transport.onStatus failed: Error: e",
            ),
            (
                TransportCall::OnMessageUnsubscribe,
                "bridge: unsubscribing from transport.onMessage failed: Error: e",
            ),
        ] {
            assert_eq!(call.failed("Error: e"), text);
        }
    }

    #[test]
    fn bridge_needs_a_transport_with_send_and_on_message_functions_first() {
        let function = &Given::Function;
        let human = &Given::Text(String::from("human"));
        for transport in [
            [&Given::Undefined, function],
            [function, &Given::Object],
            [&Given::Null, &Given::Null],
            [&Given::Object, &Given::Object],
        ] {
            let refused =
                BridgeOptions::from_given(transport, human, &Given::Undefined, &Given::Undefined);
            assert_eq!(refused, Err(RefusedOption::Transport), "{transport:?}");
        }
        assert_eq!(
            RefusedOption::Transport.message("{}"),
            "bridge: transport must have send(message) and onMessage(callback)"
        );
    }

    #[test]
    fn bridge_options_default_when_absent() {
        assert_eq!(
            options(&absent(), &absent(), &absent()),
            Ok(BridgeOptions::default())
        );
        assert_eq!(
            BridgeOptions::default().max_message_bytes,
            DEFAULT_MAX_MESSAGE_BYTES
        );
    }

    #[test]
    fn bridge_options_take_inapp_and_each_on_change() {
        let changed = options(&text("inapp"), &text("changed"), &absent());
        assert_eq!(changed.map(|o| o.on_change), Ok(OnChange::Changed));
        let manifest = options(&absent(), &text("manifest"), &absent());
        assert_eq!(manifest.map(|o| o.on_change), Ok(OnChange::Manifest));
    }

    #[test]
    fn bridge_refuses_a_caller_or_on_change_it_does_not_know_showing_its_json() {
        let caller = |c: &Shown| options(c, &absent(), &absent());
        let on_change = |o: &Shown| options(&absent(), o, &absent());
        let caller_is = "bridge: caller must be 'inapp' in protocol v1, not";
        let on_change_is = "bridge: onChange must be 'manifest' or 'changed', not";
        let null = shown(Given::Null, "null");
        for (refused, expected) in [
            (caller(&text("human")), format!("{caller_is} \"human\"")),
            (caller(&null), format!("{caller_is} null")),
            (caller(&text("Inapp")), format!("{caller_is} \"Inapp\"")),
            (
                caller(&shown(Given::Other, "{}")),
                format!("{caller_is} {{}}"),
            ),
            (
                on_change(&text("always")),
                format!("{on_change_is} \"always\""),
            ),
            (on_change(&null), format!("{on_change_is} null")),
            (on_change(&number(1.0, "1")), format!("{on_change_is} 1")),
        ] {
            assert_eq!(refused, Err(expected));
        }
    }

    #[test]
    fn bridge_max_message_bytes_is_a_positive_integer() {
        assert_eq!(max_bytes(&number(1.0, "1")), Ok(1));
        assert_eq!(max_bytes(&number(8_388_608.0, "8388608")), Ok(8_388_608));
        assert_eq!(max_bytes(&number(1e300, "1e+300")), Ok(usize::MAX));
        for (n, json) in [
            (0.0, "0"),
            (-0.0, "0"),
            (1.5, "1.5"),
            (0.5, "0.5"),
            (-1.0, "-1"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(
                max_bytes(&number(n, json)),
                Err(format!(
                    "bridge: maxMessageBytes must be a positive integer, not {json}"
                ))
            );
        }
        assert!(max_bytes(&text("10")).is_err());
        assert!(max_bytes(&shown(Given::Null, "null")).is_err());
    }

    #[test]
    fn bridge_options_refuse_the_caller_first() {
        assert_eq!(
            options(&text("x"), &text("y"), &number(0.0, "0")),
            Err(String::from(
                "bridge: caller must be 'inapp' in protocol v1, not \"x\""
            ))
        );
        assert!(options(&absent(), &text("y"), &number(0.0, "0"))
            .is_err_and(|e| e.starts_with("bridge: onChange")));
    }

    #[test]
    fn bridges_attach_in_id_order_and_filter_by_client_id() {
        let mut bridges = Bridges::new("me".into());
        let a = bridges.attach(BridgeOptions::default());
        let b = bridges.attach(BridgeOptions {
            on_change: OnChange::Changed,
            max_message_bytes: 10,
        });
        assert_eq!((a, b), (BridgeId(0), BridgeId(1)));
        assert_eq!(
            bridges.attached(),
            [(a, OnChange::Manifest), (b, OnChange::Changed)]
        );
        assert_eq!(bridges.options(b).map(|o| o.max_message_bytes), Some(10));
        assert!(bridges.detach(a) && !bridges.detach(a));
        assert!(!bridges.contains(a) && bridges.contains(b));
        assert_eq!(bridges.attach(BridgeOptions::default()), BridgeId(2));
    }

    #[test]
    fn the_answered_memory_is_shared_by_the_bridges() {
        let mut bridges = Bridges::new("me".into());
        let a = bridges.attach(BridgeOptions::default());
        bridges.answered("x");
        bridges.detach(a);
        assert!(bridges.was_answered(&IdKey::of("x")), "outlives its bridge");
        assert!(!bridges.was_answered(&IdKey::of("y")));
    }

    #[test]
    fn bridge_ids_saturate_and_the_last_one_is_replaced() {
        let mut bridges = Bridges::new("me".into());
        bridges.next = u32::MAX;
        let last = bridges.attach(BridgeOptions::default());
        let again = bridges.attach(BridgeOptions {
            on_change: OnChange::Changed,
            ..BridgeOptions::default()
        });
        assert_eq!((last, again), (BridgeId(u32::MAX), BridgeId(u32::MAX)));
        assert_eq!(bridges.attached(), [(last, OnChange::Changed)]);
    }

    #[test]
    fn answered_ids_forget_the_oldest_and_keep_long_ids_as_digests() {
        let mut ids = AnsweredIds::new(3);
        let long = |c: &str| c.repeat(SHORT_ID_BYTES + 1);
        let has = |ids: &AnsweredIds, id: &str| ids.contains(&IdKey::of(id));
        for id in ["a", &long("b"), "c"] {
            ids.insert(id);
        }
        ids.insert("a");
        assert_eq!(ids.len(), 3, "already there");
        ids.insert("d");
        assert!(!has(&ids, "a"), "the oldest is forgotten");
        assert!(has(&ids, &long("b")) && has(&ids, "c") && has(&ids, "d"));
        ids.insert(&long("e"));
        ids.insert("f");
        assert!(!has(&ids, &long("b")) && !has(&ids, "c"));
        assert_eq!(ids.len(), 3);
        assert!(matches!(IdKey::of(&long("x")), IdKey::Digest(_)));
        assert!(matches!(
            IdKey::of(&"x".repeat(SHORT_ID_BYTES)),
            IdKey::Short { .. }
        ));
        assert_ne!(IdKey::of(""), IdKey::of("\0"));
        assert!(!ids.is_empty());
        let mut none = AnsweredIds::new(0);
        none.insert("a");
        assert!(none.is_empty());
    }

    #[test]
    fn answered_ids_agree_with_a_plain_queue() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for (capacity, pool) in [(1, 3), (3, 5), (7, 20), (64, 200), (1000, 3000)] {
            let mut ids = AnsweredIds::new(capacity);
            let mut model: VecDeque<String> = Default::default();
            for step in 0..20_000 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let n = (state >> 33) as usize % pool;
                let id = if n % 3 == 0 {
                    format!("{n}{}", "L".repeat(SHORT_ID_BYTES))
                } else {
                    format!("id{n}")
                };
                let known = model.contains(&id);
                assert_eq!(
                    ids.contains(&IdKey::of(&id)),
                    known,
                    "{capacity}/{pool} step {step}: {id}"
                );
                if !known {
                    if model.len() == capacity {
                        model.pop_front();
                    }
                    model.push_back(id.clone());
                }
                ids.insert(&id);
                assert_eq!(ids.len(), model.len());
            }
            for id in &model {
                assert!(ids.contains(&IdKey::of(id)), "{capacity}/{pool}: lost {id}");
            }
        }
    }

    #[test]
    fn a_full_memory_holds_a_bounded_number_of_bytes() {
        let mut ids = AnsweredIds::new(ANSWERED_ID_MEMORY);
        for i in 0..3 * ANSWERED_ID_MEMORY {
            ids.insert(&format!("{i}{}", "x".repeat(100)));
        }
        assert_eq!(ids.len(), ANSWERED_ID_MEMORY);
        assert!(ids.held_bytes() <= 256 * 1024, "{}", ids.held_bytes());
        // Nor is the count too low to bound anything: each id is a key in
        // the queue, and the set keeps a key and a control byte per bucket
        // with at least 1/8 of its buckets empty.
        let key = core::mem::size_of::<IdKey>();
        let least = ANSWERED_ID_MEMORY * 8 / 7 * (key + 1) + ANSWERED_ID_MEMORY * key;
        assert!(ids.held_bytes() >= least, "{}", ids.held_bytes());
    }
}
