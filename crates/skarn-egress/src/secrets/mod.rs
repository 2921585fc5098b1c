//! Secrets bound to hosts (issue 27): the command holds a random
//! placeholder of the same length as the real value; the proxy puts the
//! real value into request headers only for the hosts, methods and paths
//! the secret is bound to, and puts the placeholder back where a response
//! echoes the value.
//!
//! - [`SecretSpec`]: one bound secret as handed to the proxy (name,
//!   placeholder, value, where it may go);
//! - [`Bindings`]: the compiled specs the proxy matches requests with;
//! - [`config`]: `[secrets.NAME]` in the user's configuration and the
//!   sources a value is read from.

mod command;
pub mod config;
pub mod derived;
mod keyring;
pub mod known;
mod matcher;
pub mod placeholder;
mod places;
mod set_id;
mod shell_assign;
mod shell_paths;
mod shell_tok;
mod shell_word;
pub mod source_view;

pub use command::{keep_reads, source_reads};
pub use matcher::{Bindings, Found, PathGlob};
pub use places::CommandDepends;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

/// One secret bound to hosts, ready for the proxy.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretSpec {
    /// The name it is configured under (shown in records).
    pub name: String,
    /// The variable inside the sandbox that holds the placeholder.
    pub env: String,
    /// The placeholder: random, as long as the value.
    pub placeholder: String,
    /// The real value (zeroed when dropped; never shown).
    pub value: Zeroizing<String>,
    /// Host patterns it may be sent to (see [`crate::Pattern`]).
    pub hosts: Vec<String>,
    /// HTTP methods it may be sent with (empty: any).
    #[serde(default)]
    pub methods: Vec<String>,
    /// URL path globs it may be sent to (`*` = any run of characters;
    /// empty: any path).
    #[serde(default)]
    pub paths: Vec<String>,
    /// The only request header it may appear in (empty: any header).
    #[serde(default)]
    pub header: Option<String>,
}

impl std::fmt::Debug for SecretSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretSpec")
            .field("name", &self.name)
            .field("env", &self.env)
            .field("hosts", &self.hosts)
            .field("methods", &self.methods)
            .field("paths", &self.paths)
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

impl SecretSpec {
    /// Forget the value (the helper does this once the proxy has it).
    pub fn clear_value(&mut self) {
        self.value = Zeroizing::new(String::new());
    }
}
