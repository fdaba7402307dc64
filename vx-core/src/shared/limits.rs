//! Resource statistics and limits files, TIOVX's `tivxPrintAllResourceStats`,
//! `tivxQueryResourceStats` and `tivxExportAllResourceMaxUsedValueToFile` done the Rust way: a
//! [`ResourceStat`] per limit (name, max, used, peak, required), a report table, and the peaks
//! exported as a TOML limits file that `ContextBuilder::limits_from_file` loads — run once, export,
//! ship exact limits.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::shared::config::ContextConfig;
use crate::shared::resources::{ResourceKind, Resources};

/// One limit's statistics (`tivxQueryResourceStats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceStat {
    /// What is counted.
    pub kind: ResourceKind,
    /// The limit's key in [`ContextConfig`] and in a limits file.
    pub name: &'static str,
    /// The configured maximum (`usize::MAX`: unlimited).
    pub max: usize,
    /// In use now.
    pub used: usize,
    /// The most in use at once so far.
    pub peak: usize,
    /// The smallest maximum that would have sufficed so far (the peak): what an exported limits
    /// file sets.
    pub required: usize,
}

/// Every limit of a context, as a limits file holds them (TOML; keys as in [`ContextConfig`]).
/// A key missing from a file keeps the builder's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `max_kernels`.
    pub max_kernels: Option<usize>,
    /// `max_modules`.
    pub max_modules: Option<usize>,
    /// `max_graphs`.
    pub max_graphs: Option<usize>,
    /// `max_nodes`.
    pub max_nodes: Option<usize>,
    /// `max_data_objects`.
    pub max_data_objects: Option<usize>,
    /// `max_buffer_bytes`.
    pub max_buffer_bytes: Option<usize>,
    /// `max_persistent_bytes`.
    pub max_persistent_bytes: Option<usize>,
    /// `max_scratch_bytes`.
    pub max_scratch_bytes: Option<usize>,
}

/// The largest limits file [`Limits::from_file`] reads (a few hundred bytes are typical).
pub const MAX_LIMITS_FILE_BYTES: u64 = 1 << 20;

/// Write `bytes` to a new file next to `path`, created exclusively under a name no one else can
/// have made (retried on a clash), then rename it over `path`; the new file is removed on failure.
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| std::io::Error::other("the path names no file"))?;
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        // A random name (std's randomly seeded hasher): another user cannot predict it, and
        // `create_new` refuses any path that exists, a link included.
        let salt = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u32(attempt);
            h.finish()
        };
        let tmp = dir.join(format!(".{}.{salt:016x}.tmp", name.to_string_lossy()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let written = file.write_all(bytes).and_then(|()| file.sync_all()).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

impl Limits {
    /// Read a limits file (at most [`MAX_LIMITS_FILE_BYTES`]: a larger one, or a device that never
    /// ends, is refused, not read into memory).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Limits> {
        use std::io::Read;
        let path = path.as_ref();
        let err = |why: String| Error::new(ErrorKind::InvalidParameters, why).on_object(&path.display().to_string());
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_LIMITS_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| err(format!("cannot read the limits file: {e}")))?;
        if bytes.len() as u64 > MAX_LIMITS_FILE_BYTES {
            return Err(err("the limits file is too large".into())
                .expected_found(format!("at most {MAX_LIMITS_FILE_BYTES} bytes"), "more"));
        }
        let text = String::from_utf8(bytes).map_err(|e| err(format!("the limits file is not UTF-8: {e}")))?;
        toml::from_str(&text).map_err(|e| {
            Error::new(ErrorKind::InvalidParameters, format!("the limits file is not valid: {}", e.message().trim()))
                .on_object(&path.display().to_string())
                .found(e.span().map_or("?".into(), |s| format!("bytes {}..{}", s.start, s.end)))
        })
    }

    /// Write these limits as a limits file (TOML). The file is written whole under a new name next
    /// to `path` (created exclusively, never through a link) and then renamed over `path`: a link
    /// planted at `path` is replaced, never written through, and a failed write leaves `path` as
    /// it was.
    pub fn to_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let text = toml::to_string(self)
            .map_err(|e| Error::new(ErrorKind::InvalidParameters, format!("cannot encode the limits: {e}")))?;
        let text = format!(
            "# vx-rs resource limits: the peaks of a run (Context::export_limits); load with\n\
             # ContextBuilder::limits_from_file. Keys as in ContextConfig.\n{text}"
        );
        write_replacing(path, text.as_bytes()).map_err(|e| {
            Error::new(ErrorKind::InvalidParameters, format!("cannot write the limits file: {e}"))
                .on_object(&path.display().to_string())
        })
    }

    /// Set the limits this holds in `config`.
    pub(crate) fn apply(mut self, config: &mut ContextConfig) {
        for kind in ResourceKind::ALL {
            if let Some(v) = *self.slot(kind) {
                *config_slot(config, kind) = v;
            }
        }
    }
}

/// The one table of limit fields: each kind's field in [`Limits`] and in [`ContextConfig`] (same
/// name, which is also [`ResourceKind::config_key`]).
macro_rules! limit_fields {
    ($($kind:ident => $field:ident),* $(,)?) => {
        impl Limits {
            fn slot(&mut self, kind: ResourceKind) -> &mut Option<usize> {
                match kind { $(ResourceKind::$kind => &mut self.$field,)* }
            }
        }
        fn config_slot(c: &mut ContextConfig, kind: ResourceKind) -> &mut usize {
            match kind { $(ResourceKind::$kind => &mut c.$field,)* }
        }
        fn config_value(c: &ContextConfig, kind: ResourceKind) -> usize {
            match kind { $(ResourceKind::$kind => c.$field,)* }
        }
    };
}

limit_fields! {
    Kernels => max_kernels,
    Modules => max_modules,
    Graphs => max_graphs,
    Nodes => max_nodes,
    DataObjects => max_data_objects,
    BufferBytes => max_buffer_bytes,
    PersistentBytes => max_persistent_bytes,
    ScratchBytes => max_scratch_bytes,
}

/// The configured maxima in [`ResourceKind::ALL`] order.
pub(super) fn maxima(c: &ContextConfig) -> [usize; 8] {
    ResourceKind::ALL.map(|k| config_value(c, k))
}

/// Every limit's statistics.
pub(crate) fn stats(r: &Resources) -> Vec<ResourceStat> {
    ResourceKind::ALL
        .iter()
        .map(|&kind| {
            let u = r.usage(kind);
            ResourceStat { kind, name: kind.config_key(), max: u.max, used: u.current, peak: u.peak, required: u.peak }
        })
        .collect()
}

/// The peaks as limits (`tivxExportAllResourceMaxUsedValueToFile`).
pub(crate) fn peaks(r: &Resources) -> Limits {
    let mut l = Limits::default();
    for s in stats(r) {
        *l.slot(s.kind) = Some(s.required);
    }
    l
}

/// The statistics as a table (`tivxPrintAllResourceStats`).
pub(crate) fn report(r: &Resources) -> String {
    let cell = |v: usize| if v == usize::MAX { "unlimited".to_string() } else { v.to_string() };
    let mut s = format!("{:<22} {:>12} {:>12} {:>12} {:>12}\n", "limit", "max", "used", "peak", "required");
    for st in stats(r) {
        s.push_str(&format!(
            "{:<22} {:>12} {:>12} {:>12} {:>12}\n",
            st.name,
            cell(st.max),
            st.used,
            st.peak,
            st.required
        ));
    }
    s
}
