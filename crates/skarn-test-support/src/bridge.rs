//! In-memory fakes of `skarn_codemode::ToolBridge`.
//!
//! One type, [`FakeBridge`], whose three methods are closures: the
//! ready-made constructors cover what tests usually need (echo, a
//! constant, never answering, blocking behind a [`Gate`]) and the `on_*`
//! builders replace one method. Every call is counted, and every
//! `call_tool` recorded as `"server.tool"`, so a test can check from
//! outside the isolate what the script really asked for.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use serde_json::{Value, json};
use skarn_codemode::{BridgeError, BridgeFuture, ToolBridge};

/// What a fake answers: a future the engine polls on its own thread.
pub type Reply = BridgeFuture<'static, Value>;

type CallFn = dyn Fn(&str, &str, Value) -> Reply + Send + Sync;
type ListFn = dyn Fn() -> Reply + Send + Sync;
type ReadFn = dyn Fn(&str, &str) -> Reply + Send + Sync;

/// A `ToolBridge` made of closures, counting and recording its calls.
pub struct FakeBridge {
    call: Box<CallFn>,
    list: Box<ListFn>,
    read: Box<ReadFn>,
    tool_calls: AtomicU32,
    listings: AtomicU32,
    reads: AtomicU32,
    called: Mutex<Vec<String>>,
}

impl std::fmt::Debug for FakeBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeBridge")
            .field("tool_calls", &self.tool_calls())
            .field("listings", &self.listings())
            .field("reads", &self.reads())
            .finish_non_exhaustive()
    }
}

fn ready(v: Result<Value, BridgeError>) -> Reply {
    Box::pin(std::future::ready(v))
}

impl FakeBridge {
    fn with(call: Box<CallFn>, list: Box<ListFn>, read: Box<ReadFn>) -> FakeBridge {
        FakeBridge {
            call,
            list,
            read,
            tool_calls: AtomicU32::new(0),
            listings: AtomicU32::new(0),
            reads: AtomicU32::new(0),
            called: Mutex::new(Vec::new()),
        }
    }

    /// `callTool(s, t, a)` answers `{server: s, tool: t, args: a}`,
    /// `listTools()` answers `[]`, `readResource(s, u)` answers
    /// `{server: s, uri: u}`.
    pub fn echo() -> FakeBridge {
        FakeBridge::with(
            Box::new(|server, tool, args| {
                ready(Ok(json!({"server": server, "tool": tool, "args": args})))
            }),
            Box::new(|| ready(Ok(json!([])))),
            Box::new(|server, uri| ready(Ok(json!({"server": server, "uri": uri})))),
        )
    }

    /// Every method answers `value` at once.
    pub fn answering(value: Value) -> FakeBridge {
        let (a, b, c) = (value.clone(), value.clone(), value);
        FakeBridge::with(
            Box::new(move |_, _, _| ready(Ok(a.clone()))),
            Box::new(move || ready(Ok(b.clone()))),
            Box::new(move |_, _| ready(Ok(c.clone()))),
        )
    }

    /// No method ever answers: every future stays pending.
    pub fn never_answering() -> FakeBridge {
        FakeBridge::with(
            Box::new(|_, _, _| Box::pin(std::future::pending())),
            Box::new(|| Box::pin(std::future::pending())),
            Box::new(|_, _| Box::pin(std::future::pending())),
        )
    }

    /// A broken bridge: the first poll of any answer blocks the polling
    /// thread until `gate` opens, then answers `1` (`callTool`), `[]`
    /// (`listTools`) or `null` (`readResource`). A gate never opened
    /// blocks for good.
    pub fn blocking_until(gate: std::sync::Arc<Gate>) -> FakeBridge {
        let (g1, g2, g3) = (gate.clone(), gate.clone(), gate);
        FakeBridge::with(
            Box::new(move |_, _, _| {
                let g = g1.clone();
                Box::pin(async move {
                    g.wait();
                    Ok(json!(1))
                })
            }),
            Box::new(move || {
                let g = g2.clone();
                Box::pin(async move {
                    g.wait();
                    Ok(json!([]))
                })
            }),
            Box::new(move |_, _| {
                let g = g3.clone();
                Box::pin(async move {
                    g.wait();
                    Ok(Value::Null)
                })
            }),
        )
    }

    /// `callTool` answers what `f(server, tool, args)` returns, computed
    /// when the script makes the call.
    pub fn on_call(
        self,
        f: impl Fn(&str, &str, Value) -> Result<Value, BridgeError> + Send + Sync + 'static,
    ) -> FakeBridge {
        self.on_call_async(move |s, t, a| ready(f(s, t, a)))
    }

    /// `callTool` answers with the future `f(server, tool, args)` returns
    /// (one that waits, panics when polled, runs a side effect first...).
    pub fn on_call_async(
        mut self,
        f: impl Fn(&str, &str, Value) -> Reply + Send + Sync + 'static,
    ) -> FakeBridge {
        self.call = Box::new(f);
        self
    }

    /// `listTools()` answers `listing`.
    pub fn with_tools(mut self, listing: Value) -> FakeBridge {
        self.list = Box::new(move || ready(Ok(listing.clone())));
        self
    }

    /// `readResource(server, uri)` answers what `f(server, uri)` returns.
    pub fn on_read(
        mut self,
        f: impl Fn(&str, &str) -> Result<Value, BridgeError> + Send + Sync + 'static,
    ) -> FakeBridge {
        self.read = Box::new(move |s, u| ready(f(s, u)));
        self
    }

    /// How many `callTool`s reached the bridge.
    pub fn tool_calls(&self) -> u32 {
        self.tool_calls.load(Ordering::SeqCst)
    }

    /// How many `listTools()` reached the bridge.
    pub fn listings(&self) -> u32 {
        self.listings.load(Ordering::SeqCst)
    }

    /// How many `readResource`s reached the bridge.
    pub fn reads(&self) -> u32 {
        self.reads.load(Ordering::SeqCst)
    }

    /// Every `callTool` so far as `"server.tool"`, in order.
    pub fn called(&self) -> Vec<String> {
        self.called
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ToolBridge for FakeBridge {
    fn call_tool(&self, server: &str, tool: &str, args: Value) -> BridgeFuture<'_, Value> {
        self.tool_calls.fetch_add(1, Ordering::SeqCst);
        self.called
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("{server}.{tool}"));
        (self.call)(server, tool, args)
    }

    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        (self.list)()
    }

    fn read_resource(&self, server: &str, uri: &str) -> BridgeFuture<'_, Value> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        (self.read)(server, uri)
    }
}

/// A one-way gate: threads [`wait`](Gate::wait) until someone
/// [`open`](Gate::open)s it.
#[derive(Debug, Default)]
pub struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Open the gate for good and wake every waiter.
    pub fn open(&self) {
        *self.open.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cv.notify_all();
    }

    /// Block this thread until the gate is open.
    pub fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        while !*open {
            open = self.cv.wait(open).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use skarn_codemode::ToolBridge;

    use super::{FakeBridge, Gate};

    fn now<T>(f: impl std::future::Future<Output = T>) -> T {
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("not ready"),
        }
    }

    #[test]
    fn echo_counts_and_records() {
        let b = FakeBridge::echo();
        let v = now(b.call_tool("s", "t", json!({"n": 1}))).unwrap();
        assert_eq!(v, json!({"server": "s", "tool": "t", "args": {"n": 1}}));
        assert_eq!(now(b.list_tools()).unwrap(), json!([]));
        assert_eq!(
            now(b.read_resource("s", "u")).unwrap(),
            json!({"server": "s", "uri": "u"})
        );
        assert_eq!((b.tool_calls(), b.listings(), b.reads()), (1, 1, 1));
        assert_eq!(b.called(), vec!["s.t"]);
    }

    #[test]
    fn builders_replace_one_method() {
        let b = FakeBridge::answering(json!(null))
            .on_call(|_, tool, _| Ok(json!(tool)))
            .with_tools(json!(["x"]));
        assert_eq!(now(b.call_tool("s", "t", json!({}))).unwrap(), json!("t"));
        assert_eq!(now(b.list_tools()).unwrap(), json!(["x"]));
        assert_eq!(now(b.read_resource("s", "u")).unwrap(), json!(null));
    }

    #[test]
    fn gate_releases_a_blocked_answer() {
        let gate = Arc::new(Gate::new());
        let b = Arc::new(FakeBridge::blocking_until(gate.clone()));
        let t = std::thread::spawn(move || now(b.call_tool("s", "t", json!({}))));
        gate.open();
        assert_eq!(t.join().unwrap().unwrap(), json!(1));
    }
}
