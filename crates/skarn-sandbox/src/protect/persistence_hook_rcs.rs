//! The configuration files of the git-hook managers whose settings may
//! also be a `package.json` key ([`crate::protect::package_json`]):
//! husky 4, nano-staged and simple-git-hooks (atk22k F9). The hooks they
//! install run the commands these files name (or, for the JavaScript
//! forms, load the file as code) at the user's next commit; they are
//! protected as lint-staged's files are (part of
//! [`crate::protect::persistence::ENTRIES`]; data only).

use crate::protect::persistence_entries::Reserve::IfAny;
use crate::protect::persistence_entries::{Entry, e};
use crate::protect::persistence_families::{HUSKY4, NANO_STAGED, SIMPLE_GIT_HOOKS};

/// Each family with why a host program runs it.
const GROUPS: &[(&[&str], &str)] = &[
    (
        HUSKY4,
        "husky 4's hook scripts run the hook commands it names (the JavaScript forms are \
         loaded as code) at every commit",
    ),
    (
        NANO_STAGED,
        "nano-staged (run by the pre-commit hook) runs the commands it names, and loads the \
         JavaScript forms as code",
    ),
    (
        SIMPLE_GIT_HOOKS,
        "simple-git-hooks writes the commands it names into git's hooks (its installer runs \
         at install time) and loads the JavaScript forms as code",
    ),
];

const fn count() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < GROUPS.len() {
        n += GROUPS[i].0.len();
        i += 1;
    }
    n
}

const N: usize = count();

const fn entries() -> [Entry; N] {
    let mut out = [e("", IfAny(HUSKY4), ""); N];
    let (mut i, mut k) = (0, 0);
    while i < GROUPS.len() {
        let mut j = 0;
        while j < GROUPS[i].0.len() {
            out[k] = e(GROUPS[i].0[j], IfAny(GROUPS[i].0), GROUPS[i].1);
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

const fn names() -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut k) = (0, 0);
    while i < GROUPS.len() {
        let mut j = 0;
        while j < GROUPS[i].0.len() {
            out[k] = GROUPS[i].0[j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

const ENTRIES_ARR: [Entry; N] = entries();
const NAMES_ARR: [&str; N] = names();

/// The entries of [`crate::protect::persistence::ENTRIES`] for these files.
pub(crate) const PART: &[Entry] = &ENTRIES_ARR;
/// Their names, for [`crate::protect::persistence::AFTER_RUN_TOP`] (a new
/// one counts even where none was: the setup may be a `package.json` key,
/// and these files win over it or sit beside it).
pub(crate) const NAMES: &[&str] = &NAMES_ARR;

/// Whether `fam` is one of these families (read below the top too: husky
/// 4 and nano-staged read the package's directory, a mono-repository's
/// `frontend/`).
pub(crate) fn is_family(fam: &[&str]) -> bool {
    GROUPS.iter().any(|(g, _)| *g == fam)
}
