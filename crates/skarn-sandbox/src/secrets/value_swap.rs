//! What a placeholder copy of a credential file needs from the run's
//! secrets: the placeholder of a value, and whether a text holds one.
//! A trait of its own, so the copy makers (`netrc_copy`,
//! `encoded_copies`) do not depend on the secrets' owner
//! (`egress_secrets`), which calls them.

/// The run's granted values, as the copy makers see them.
pub trait ValueSwap {
    /// The placeholder that stands for the value `v` (trimmed, unquoted).
    fn placeholder_of(&self, v: &str) -> Option<&str>;
    /// Whether `text` holds any granted value (in any spelling the value
    /// check knows).
    fn holds_value(&self, text: &[u8]) -> bool;
}

/// One value and its placeholder, for the copy makers' tests.
#[cfg(test)]
pub struct OneValue {
    pub value: String,
    pub placeholder: String,
}

#[cfg(test)]
impl ValueSwap for OneValue {
    fn placeholder_of(&self, v: &str) -> Option<&str> {
        (v.trim().trim_matches(['"', '\'']) == self.value).then_some(self.placeholder.as_str())
    }
    fn holds_value(&self, text: &[u8]) -> bool {
        let v = self.value.as_bytes();
        text.windows(v.len()).any(|w| w == v)
    }
}
