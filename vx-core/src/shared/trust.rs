//! Which module files a context loads (`ContextBuilder::module_trust`): the ownership rule and the
//! pinned SHA-256 digests. Only the policy lives here; `module/trust.rs` applies it to files.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// Which kernel-module files the loader accepts. A module is native code that runs with all of the
/// process's rights, so by default ([`ModuleTrust::owner`]) a module file is loaded only if it and
/// every directory above it are owned by root or by the process's user and are writable by no one
/// else (a root-owned sticky directory such as `/tmp` is accepted as an ancestor): no other local
/// user can plant or replace a module. [`ModuleTrust::any`] drops that rule, for development.
///
/// Digests can be pinned on top of either ([`pin`](Self::pin)): once any digest is pinned, a module
/// is loaded (or reloaded) only if the SHA-256 of the bytes the loader maps is listed for its name;
/// any other module, or another build of a pinned one, is refused. `vx inspect` prints a module
/// file's digest. See `docs/book/src/security.md`.
///
/// ```
/// use vx::{Context, ModuleTrust};
/// # fn main() -> vx::Result<()> {
/// let trust = ModuleTrust::owner()
///     .pin("vx_filters", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")?;
/// let ctx = Context::builder().module_trust(trust).build()?;
/// # let _ = ctx;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ModuleTrust {
    any_owner: bool,
    pins: BTreeMap<String, Vec<[u8; 32]>>,
}

impl ModuleTrust {
    /// The default: a module file and every directory above it must be owned by root or by the
    /// process's (effective) user and not be writable by group or others; a directory owned by
    /// root with the sticky bit (`/tmp`) is accepted as an ancestor.
    pub fn owner() -> ModuleTrust {
        ModuleTrust::default()
    }

    /// Load module files whoever owns or can write them (development only: any local user who can
    /// write a plugin directory, or a directory above it, can then run code in this process).
    /// Pinned digests, if any, still apply.
    pub fn any() -> ModuleTrust {
        ModuleTrust { any_owner: true, pins: BTreeMap::new() }
    }

    /// Allow the build of module `module` whose SHA-256 is `sha256_hex` (64 hex digits, as
    /// `vx inspect` prints it); several digests may be pinned per module (e.g. the running build and
    /// the next). Once a digest is pinned for any module, every module's digest must be listed.
    pub fn pin(mut self, module: &str, sha256_hex: &str) -> Result<ModuleTrust> {
        let digest = parse_digest(sha256_hex).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidParameters,
                format!("the pinned digest for module '{module}' is not a SHA-256"),
            )
            .expected_found("64 hexadecimal digits", format!("{sha256_hex:?}"))
        })?;
        let list = self.pins.entry(module.to_owned()).or_default();
        if !list.contains(&digest) {
            list.push(digest);
        }
        Ok(self)
    }

    /// True unless [`any`](Self::any): files and directories are checked for their owner and mode.
    pub fn checks_owners(&self) -> bool {
        !self.any_owner
    }

    /// True when digests are pinned (then every module's digest must be listed).
    pub fn pins_digests(&self) -> bool {
        !self.pins.is_empty()
    }

    /// The digests pinned for `module`, as hex.
    pub fn pinned(&self, module: &str) -> Vec<String> {
        self.pins.get(module).map(|l| l.iter().map(|d| hex(d)).collect()).unwrap_or_default()
    }

    /// Whether a module named `module` whose SHA-256 is `digest` may be loaded, as far as pinning
    /// goes (always, when nothing is pinned).
    pub(crate) fn allows_digest(&self, module: &str, digest: &[u8; 32]) -> bool {
        !self.pins_digests() || self.pins.get(module).is_some_and(|l| l.contains(digest))
    }
}

impl fmt::Debug for ModuleTrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pins: BTreeMap<&str, Vec<String>> =
            self.pins.iter().map(|(k, v)| (k.as_str(), v.iter().map(|d| hex(d)).collect())).collect();
        f.debug_struct("ModuleTrust").field("checks_owners", &self.checks_owners()).field("pins", &pins).finish()
    }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn parse_digest(s: &str) -> Option<[u8; 32]> {
    let s = s.trim();
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08";

    #[test]
    fn digests_parse_as_hex_of_either_case_and_nothing_else() {
        let t = ModuleTrust::owner().pin("m", D).unwrap();
        assert_eq!(t.pinned("m"), [D.to_lowercase()]);
        assert!(t.pins_digests() && t.checks_owners());
        for bad in ["", "abc", &D[1..], &format!("{}g", &D[1..]), &format!("{D}00")] {
            let e = ModuleTrust::owner().pin("m", bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidParameters, "{bad}");
        }
    }

    #[test]
    fn once_anything_is_pinned_only_listed_digests_pass() {
        let d = parse_digest(D).unwrap();
        let other = [7u8; 32];
        assert!(ModuleTrust::owner().allows_digest("m", &other), "nothing pinned: everything passes");
        let t = ModuleTrust::any().pin("m", D).unwrap();
        assert!(!t.checks_owners());
        assert!(t.allows_digest("m", &d));
        assert!(!t.allows_digest("m", &other), "another build of a pinned module");
        assert!(!t.allows_digest("n", &d), "a module with no pin");
        assert_eq!(
            format!("{t:?}"),
            format!("ModuleTrust {{ checks_owners: false, pins: {{\"m\": [\"{}\"]}} }}", D.to_lowercase())
        );
    }
}
