//! Secrets kept out of the sandbox: the private home's dotfiles without
//! credentials ([`dotfiles`]), credential-looking text
//! ([`credential_text`]), and a run's granted secrets: placeholders and the
//! egress proxy's CA ([`egress_secrets`], Linux).

pub mod credential_text;
pub mod dotfiles;
#[cfg(target_os = "linux")]
pub mod egress_secrets;
