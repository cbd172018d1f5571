//! The boundary's one executor: [`spawn`] polls a future (a tool's run, a
//! validation, a restorer, the answer to `ctx.confirm`) in a microtask, and
//! again each time its waker is woken (a `JsFuture` it awaits settled).
//!
//! Why not `wasm-bindgen-futures`' `spawn_local`: measured side by side it
//! was as fast (round trip within 4%) and 0.5 KB gzip smaller, but its
//! queue reads `js_sys::global()`, whose generated glue names Node's
//! `global`, which browser bundlers polyfill (docs/benchmarks.md, "The
//! boundary's loop"). A task spawned or woken while the queue runs (a
//! lane's next run is spawned when its predecessor's outcome reaches the
//! core) is polled in the same microtask, for up to [`ROUNDS`] rounds;
//! what is left after that waits for the next microtask, so other work
//! gets a turn.

use crate::prelude::*;
use alloc::sync::Arc;
use alloc::task::Wake;
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Waker};
use js_sys::Function;

use crate::vecmap::VecMap;
use crate::wasm::error::{report, Busy};
use crate::wasm::host;

/// Rounds of ready tasks one microtask polls.
const ROUNDS: usize = 64;

type Task = Pin<Box<dyn Future<Output = ()>>>;

struct Queue {
    /// Each live task (`None` while it is being polled) and its waker.
    tasks: VecMap<u32, (Option<Task>, Waker)>,
    /// Tasks to poll, in the order they were spawned or woken.
    ready: Vec<u32>,
    next_id: u32,
    /// A microtask is queued to run the ready tasks.
    scheduled: bool,
}

std::thread_local! {
    // Constant-initialized: no lazy-initialization check on each access.
    static QUEUE: RefCell<Queue> = const {
        RefCell::new(Queue {
            tasks: VecMap::EMPTY,
            ready: Vec::new(),
            next_id: 0,
            scheduled: false,
        })
    };
    static RUN: Function = host::js_function(run);
}

/// `f` on the queue (Rust only: no JS runs in `f`, so it is never busy).
fn with<R>(f: impl FnOnce(&mut Queue) -> R) -> Option<R> {
    let answer = QUEUE.with(|queue| queue.try_borrow_mut().ok().map(|mut q| f(&mut q)));
    if answer.is_none() {
        report(Busy);
    }
    answer
}

/// A task's waker: its id, put back in the ready list.
struct TaskWaker(u32);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        ready(self.0);
    }
}

/// Marks task `id` ready and makes sure a microtask will poll it.
fn ready(id: u32) {
    let schedule = with(|q| {
        q.ready.push(id);
        !core::mem::replace(&mut q.scheduled, true)
    });
    if schedule == Some(true) {
        RUN.with(host::queue_microtask);
    }
}

/// Polls `future` in a microtask, and then whenever it is woken, until it
/// is done.
pub fn spawn(future: impl Future<Output = ()> + 'static) {
    let id = with(|q| {
        let id = q.next_id;
        q.next_id = q.next_id.wrapping_add(1);
        let waker = Waker::from(Arc::new(TaskWaker(id)));
        q.tasks.insert(id, (Some(Box::pin(future)), waker));
        id
    });
    if let Some(id) = id {
        ready(id);
    }
}

/// The microtask: the ready tasks in order, then those made ready
/// meanwhile, for up to [`ROUNDS`] rounds. A task is taken out of the
/// queue while it is polled (its JS may spawn or wake others).
fn run() {
    for _ in 0..ROUNDS {
        let ready = with(|q| core::mem::take(&mut q.ready)).unwrap_or_default();
        if ready.is_empty() {
            break;
        }
        for id in ready {
            // Absent: done, or woken twice and already polled.
            let Some(Some((mut task, waker))) = with(|q| {
                q.tasks
                    .get_mut(&id)
                    .and_then(|(task, waker)| Some((task.take()?, waker.clone())))
            }) else {
                continue;
            };
            let done = task
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready();
            with(|q| {
                if done {
                    q.tasks.remove(&id);
                } else if let Some((slot, _)) = q.tasks.get_mut(&id) {
                    *slot = Some(task);
                }
            });
        }
    }
    let again = with(|q| {
        q.scheduled = !q.ready.is_empty();
        q.scheduled
    });
    if again == Some(true) {
        RUN.with(host::queue_microtask);
    }
}
