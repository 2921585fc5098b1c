//! The calls of 2026-07-28 clients parked between `input_required`
//! rounds (ADR 0088), by their random `requestState`, held by the relay;
//! the rounds themselves are run by [`crate::input_rounds`].

use std::collections::HashMap;
use std::sync::Mutex;

use rand::RngCore;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, GetPromptResult, InputRequest, ReadResourceResult};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::rounds::Ask;
use crate::sync_util::lock;

/// Calls that may wait for a client's answers at once.
const MAX_PARKED: usize = 256;

/// What a call ends with.
pub(crate) enum Finished {
    Tool(CallToolResult),
    Prompt(GetPromptResult),
    Resource(ReadResourceResult),
}

/// A call waiting for its client's next retry.
pub(crate) struct ParkedCall {
    /// The method and name the call was made with (a retry must match).
    pub(crate) what: String,
    pub(crate) result: oneshot::Receiver<Result<Finished, ErrorData>>,
    pub(crate) asks: mpsc::UnboundedReceiver<Ask>,
    /// The call's rounds (marked attended while a request serves it).
    pub(crate) rounds: std::sync::Arc<crate::relay::rounds::Rounds>,
    /// Questions asked and not answered yet (asked again each round).
    pub(crate) pending: HashMap<String, (InputRequest, oneshot::Sender<Value>)>,
    pub(crate) next_key: u32,
}

impl ParkedCall {
    /// Keep a question for the next round, under the server's own name
    /// for it when it gave one that is free and holds nothing hidden
    /// (atk25d F2: the client may show the key).
    pub(crate) fn add(&mut self, ask: Ask) {
        let key = match ask.key {
            Some(k) if !self.pending.contains_key(&k) && !crate::text_safe::has_hidden(&k) => k,
            _ => loop {
                self.next_key += 1;
                let k = format!("q{}", self.next_key);
                if !self.pending.contains_key(&k) {
                    break k;
                }
            },
        };
        self.pending.insert(key, (ask.request, ask.reply));
    }
}

/// The calls waiting for their client's next retry, by `requestState`.
#[derive(Default)]
pub struct Parked {
    calls: Mutex<HashMap<String, ParkedCall>>,
}

impl Parked {
    pub(crate) fn park(&self, call: ParkedCall) -> Result<String, ErrorData> {
        let mut calls = lock(&self.calls);
        if calls.len() >= MAX_PARKED {
            return Err(ErrorData::internal_error(
                "too many calls are waiting for their clients' answers",
                None,
            ));
        }
        let mut id = [0u8; 16];
        rand::rng().fill_bytes(&mut id);
        let state: String = id.iter().map(|b| format!("{b:02x}")).collect();
        calls.insert(state.clone(), call);
        Ok(state)
    }

    pub(crate) fn take(&self, state: &str) -> Option<ParkedCall> {
        lock(&self.calls).remove(state)
    }
}
