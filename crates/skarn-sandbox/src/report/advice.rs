//! Advice to widen the sandbox reaches the user, never a model (issue 24
//! item 5, attack atk24i F1/F8, ADR 0240). Every line skarn prints that
//! says how to loosen the policy (a flag, a configuration key, `skarn
//! trust`) puts that advice last, starting with one of [`MARKERS`]; what a
//! model reads (a command the hook confined, the gateway's `run` tool and
//! `search` results) gets [`fact_only`]: each line cut at its first marker,
//! so the model learns what was denied and the user decides what to allow.

use crate::report::denials::{Caller, FIX_MARKER};

/// Where the advice of a line starts (the rest of the line is advice).
pub const MARKERS: &[&str] = &[
    FIX_MARKER,
    // An untrusted or possibly planted workspace `skarn.toml`.
    "; check it and run `skarn trust",
    "; if you wrote it, check it and run `skarn trust",
    // A refused workspace.
    "; run in a project directory, name one with --workspace, or pass",
    "; run from a project directory, or pass --allow-home-workspace",
    // A host that cannot confine.
    " (fail_closed is set; use --no-sandbox",
    " (--fail-open runs it",
    // A program outside what the run may see.
    ": grant its directory with --exec",
    // A path outside what the run may read.
    READ_ADVICE,
    // An HTTP downstream on a private address.
    PRIVATE_ADVICE,
    // A tool the agent hook does not know.
    USER_MAY_ALLOW,
    // A workspace the home's start-up files name (atk24j F4).
    " (to keep it writable",
    // The agent's own hooks that run unconfined (atk24m F18).
    USER_MAY_CONFINE,
];

/// The clause of the agent hook's refusal while the agent's own hooks run
/// unconfined that says how the user confines or trusts them.
pub const USER_MAY_CONFINE: &str = " or the user trusts them";

/// The clause of the agent hook's refusal of a tool it does not know that
/// says how the user allows it (`[hook] allow_tools`).
pub const USER_MAY_ALLOW: &str = "; the user may allow it";

/// Where the advice of the line naming paths outside what the run may
/// read starts (the grant).
pub const READ_ADVICE: &str = "; to grant it: --read ";

/// The clause of the gateway's address check that names its switch.
pub const PRIVATE_ADVICE: &str =
    ": the gateway reaches loopback and private addresses only when the server's table says";

/// Fragments in the middle of a line that name a wider policy (the
/// failure hint's flags): removed, the line kept.
pub const FRAGMENTS: &[&str] = &[
    "; --net loopback|outbound|all",
    " (--net outbound|all)",
    "; run with --report for the full policy",
];

/// `text` with the advice of every line removed (see the module text).
pub fn fact_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut l = line.to_owned();
        for f in FRAGMENTS {
            l = l.replace(f, "");
        }
        if let Some(cut) = MARKERS.iter().filter_map(|m| l.find(m)).min() {
            l.truncate(cut);
        }
        out.push_str(&l);
    }
    out
}

/// `text` as `caller` may read it: whole for a person at a terminal, the
/// facts only for a model (the hook's commands, the gateway).
pub fn for_caller(text: &str, caller: Caller) -> String {
    if caller.model_facing() {
        fact_only(text)
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_gets_the_fact_without_the_advice() {
        let l = "warning: /p/skarn.toml is not trusted: its settings that widen the sandbox \
                 (net) are ignored (narrowing ones apply); if you wrote it, check it and run \
                 `skarn trust /p/skarn.toml`\nnext line";
        let f = fact_only(l);
        assert!(f.ends_with("(narrowing ones apply)\nnext line"), "{f}");
        let n = "skarn: sandbox: the command failed and this run was denied: connection to \
                 evil.test:80 (not in the allow list); to allow the network: net = \"allow:evil\"";
        assert_eq!(
            fact_only(n),
            "skarn: sandbox: the command failed and this run was denied: connection to \
             evil.test:80 (not in the allow list)"
        );
        let h = "network (all of it: names do not resolve; --net loopback|outbound|all); x";
        assert_eq!(fact_only(h), "network (all of it: names do not resolve); x");
        assert_eq!(for_caller(n, Caller::Terminal), n);
        assert!(!for_caller(n, Caller::Gateway).contains("allow:evil"));
    }
}
