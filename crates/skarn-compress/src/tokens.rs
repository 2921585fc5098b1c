//! Token counting with OpenAI's o200k_base encoding (through `tiktoken-rs`,
//! which embeds the vocabulary, so it works offline), plus a fast estimate
//! used on the hot path.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().expect("embedded o200k_base vocabulary loads"))
}

/// Exact o200k_base token count (slow: loads the vocabulary on first use).
pub fn count(text: &str) -> usize {
    bpe().encode_ordinary(text).len()
}

/// A cheap upper-bound-ish estimate (about 4 bytes per token) used to decide
/// whether output is short enough to pass unchanged.
pub fn estimate(text: &str) -> usize {
    text.len().div_ceil(4)
}
