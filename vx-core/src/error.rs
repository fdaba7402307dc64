//! The one error type of the runtime: a kind that maps to an OpenVX status code, a message, and
//! the context of where it happened (graph, node, kernel, parameter, expected versus found).

use std::fmt;

use vx_plugin_abi::Status;

/// What went wrong, as a category. Each kind maps to exactly one OpenVX status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `VX_FAILURE`: a generic failure, e.g. removing a kernel that is still referenced.
    Failure,
    /// `VX_ERROR_NOT_IMPLEMENTED`
    NotImplemented,
    /// `VX_ERROR_NOT_SUPPORTED`: the operation is not allowed in this state or context.
    NotSupported,
    /// `VX_ERROR_NOT_SUFFICIENT`
    NotSufficient,
    /// `VX_ERROR_NOT_ALLOCATED`
    NotAllocated,
    /// `VX_ERROR_NOT_COMPATIBLE`: an object does not match the meta data required of it.
    NotCompatible,
    /// `VX_ERROR_NO_RESOURCES`: a configured limit or an id pool is exhausted.
    NoResources,
    /// `VX_ERROR_NO_MEMORY`: a buffer could not be allocated.
    NoMemory,
    /// `VX_ERROR_OPTIMIZED_AWAY`: a virtual object was accessed from outside its graph.
    OptimizedAway,
    /// `VX_ERROR_INVALID_PARAMETERS`
    InvalidParameters,
    /// `VX_ERROR_INVALID_MODULE`
    InvalidModule,
    /// `VX_ERROR_INVALID_REFERENCE`: an object from another context, a removed kernel, …
    InvalidReference,
    /// `VX_ERROR_INVALID_LINK`
    InvalidLink,
    /// `VX_ERROR_INVALID_FORMAT`
    InvalidFormat,
    /// `VX_ERROR_INVALID_DIMENSION`
    InvalidDimension,
    /// `VX_ERROR_INVALID_VALUE`
    InvalidValue,
    /// `VX_ERROR_INVALID_TYPE`
    InvalidType,
    /// `VX_ERROR_INVALID_GRAPH`: a cycle, a virtual object without a writer, …
    InvalidGraph,
    /// `VX_ERROR_INVALID_NODE`
    InvalidNode,
    /// `VX_ERROR_INVALID_SCOPE`: a virtual object used outside the graph that owns it.
    InvalidScope,
    /// `VX_ERROR_GRAPH_SCHEDULED`
    GraphScheduled,
    /// `VX_ERROR_GRAPH_ABANDONED`
    GraphAbandoned,
    /// `VX_ERROR_MULTIPLE_WRITERS`: two nodes write the same object.
    MultipleWriters,
    /// `VX_ERROR_REFERENCE_NONZERO`
    ReferenceNonzero,
    /// A wait ran out of time (`Node::send_command`); status `VX_FAILURE`.
    Timeout,
}

impl ErrorKind {
    /// The OpenVX status code of this kind.
    pub const fn status(self) -> Status {
        match self {
            ErrorKind::Failure => Status::Failure,
            ErrorKind::NotImplemented => Status::NotImplemented,
            ErrorKind::NotSupported => Status::NotSupported,
            ErrorKind::NotSufficient => Status::NotSufficient,
            ErrorKind::NotAllocated => Status::NotAllocated,
            ErrorKind::NotCompatible => Status::NotCompatible,
            ErrorKind::NoResources => Status::NoResources,
            ErrorKind::NoMemory => Status::NoMemory,
            ErrorKind::OptimizedAway => Status::OptimizedAway,
            ErrorKind::InvalidParameters => Status::InvalidParameters,
            ErrorKind::InvalidModule => Status::InvalidModule,
            ErrorKind::InvalidReference => Status::InvalidReference,
            ErrorKind::InvalidLink => Status::InvalidLink,
            ErrorKind::InvalidFormat => Status::InvalidFormat,
            ErrorKind::InvalidDimension => Status::InvalidDimension,
            ErrorKind::InvalidValue => Status::InvalidValue,
            ErrorKind::InvalidType => Status::InvalidType,
            ErrorKind::InvalidGraph => Status::InvalidGraph,
            ErrorKind::InvalidNode => Status::InvalidNode,
            ErrorKind::InvalidScope => Status::InvalidScope,
            ErrorKind::GraphScheduled => Status::GraphScheduled,
            ErrorKind::GraphAbandoned => Status::GraphAbandoned,
            ErrorKind::MultipleWriters => Status::MultipleWriters,
            ErrorKind::ReferenceNonzero => Status::ReferenceNonzero,
            ErrorKind::Timeout => Status::Failure,
        }
    }

    /// The kind for a non-success status (`Success` maps to `Failure`: it is not an error).
    pub const fn from_status(status: Status) -> ErrorKind {
        match status {
            Status::Success | Status::Failure => ErrorKind::Failure,
            Status::NotImplemented => ErrorKind::NotImplemented,
            Status::NotSupported => ErrorKind::NotSupported,
            Status::NotSufficient => ErrorKind::NotSufficient,
            Status::NotAllocated => ErrorKind::NotAllocated,
            Status::NotCompatible => ErrorKind::NotCompatible,
            Status::NoResources => ErrorKind::NoResources,
            Status::NoMemory => ErrorKind::NoMemory,
            Status::OptimizedAway => ErrorKind::OptimizedAway,
            Status::InvalidParameters => ErrorKind::InvalidParameters,
            Status::InvalidModule => ErrorKind::InvalidModule,
            Status::InvalidReference => ErrorKind::InvalidReference,
            Status::InvalidLink => ErrorKind::InvalidLink,
            Status::InvalidFormat => ErrorKind::InvalidFormat,
            Status::InvalidDimension => ErrorKind::InvalidDimension,
            Status::InvalidValue => ErrorKind::InvalidValue,
            Status::InvalidType => ErrorKind::InvalidType,
            Status::InvalidGraph => ErrorKind::InvalidGraph,
            Status::InvalidNode => ErrorKind::InvalidNode,
            Status::InvalidScope => ErrorKind::InvalidScope,
            Status::GraphScheduled => ErrorKind::GraphScheduled,
            Status::GraphAbandoned => ErrorKind::GraphAbandoned,
            Status::MultipleWriters => ErrorKind::MultipleWriters,
            Status::ReferenceNonzero => ErrorKind::ReferenceNonzero,
        }
    }
}

/// Where an error happened and what was expected. Every field is optional; the runtime fills in
/// what it knows as the error travels outwards (a kernel's validator knows the parameter, the
/// graph adds the graph and node names).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorContext {
    /// The graph it happened in.
    pub graph: Option<String>,
    /// The node it happened in.
    pub node: Option<String>,
    /// The kernel involved.
    pub kernel: Option<String>,
    /// The parameter index involved.
    pub parameter: Option<u32>,
    /// The data object involved (its name).
    pub object: Option<String>,
    /// What was expected.
    pub expected: Option<String>,
    /// What was found instead.
    pub found: Option<String>,
}

/// The error of every fallible vx-rs operation.
///
/// `Display` renders one readable sentence, e.g.
/// `graph 'edges', node 'blur' (kernel 'org.example.blur'), parameter 1: output meta data does not
/// match the object: expected U8 640x480, found S16 640x480 [VX_ERROR_INVALID_FORMAT (-14)]`.
///
/// `Debug` (`{:?}`) is what `fn main() -> vx::Result<()>` prints after `Error: `: that sentence,
/// then the error's causes (its `source()` chain) under `Caused by:`, as `anyhow` prints them.
/// `{:#?}` is the structured dump (`Error { kind, message, context }`); [`Error::kind`],
/// [`Error::message`] and [`Error::context`] give the fields.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct Error {
    kind: ErrorKind,
    message: String,
    context: Box<ErrorContext>,
}

/// Shorthand for `std::result::Result<T, vx::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with a human-readable message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into(), context: Box::default() }
    }

    /// The category of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The OpenVX status code of the error.
    pub fn status(&self) -> Status {
        self.kind.status()
    }

    /// The message without context.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where the error happened.
    pub fn context(&self) -> &ErrorContext {
        &self.context
    }

    /// Name the graph (kept if already set: the innermost context wins).
    pub fn in_graph(mut self, name: &str) -> Error {
        self.context.graph.get_or_insert_with(|| name.to_owned());
        self
    }

    /// Name the node.
    pub fn in_node(mut self, name: &str) -> Error {
        self.context.node.get_or_insert_with(|| name.to_owned());
        self
    }

    /// Name the kernel.
    pub fn in_kernel(mut self, name: &str) -> Error {
        self.context.kernel.get_or_insert_with(|| name.to_owned());
        self
    }

    /// Name the parameter index.
    pub fn at_parameter(mut self, index: u32) -> Error {
        self.context.parameter.get_or_insert(index);
        self
    }

    /// Name the data object concerned.
    pub fn on_object(mut self, name: &str) -> Error {
        self.context.object.get_or_insert_with(|| name.to_owned());
        self
    }

    /// Say what was expected and what was found.
    pub fn expected_found(mut self, expected: impl fmt::Display, found: impl fmt::Display) -> Error {
        self.context.expected = Some(expected.to_string());
        self.context.found = Some(found.to_string());
        self
    }

    /// Say what was found (when there is no single expected value).
    pub fn found(mut self, found: impl fmt::Display) -> Error {
        self.context.found = Some(found.to_string());
        self
    }

    /// Say what was expected.
    pub fn expected(mut self, expected: impl fmt::Display) -> Error {
        self.context.expected = Some(expected.to_string());
        self
    }

    fn render(&self) -> String {
        let c = &self.context;
        let mut where_ = Vec::new();
        if let Some(g) = &c.graph {
            where_.push(format!("graph '{g}'"));
        }
        match (&c.node, &c.kernel) {
            (Some(n), Some(k)) => where_.push(format!("node '{n}' (kernel '{k}')")),
            (Some(n), None) => where_.push(format!("node '{n}'")),
            (None, Some(k)) => where_.push(format!("kernel '{k}'")),
            (None, None) => {}
        }
        if let Some(p) = c.parameter {
            where_.push(format!("parameter {p}"));
        }
        if let Some(o) = &c.object {
            where_.push(format!("object '{o}'"));
        }
        let mut s = String::new();
        if !where_.is_empty() {
            s.push_str(&where_.join(", "));
            s.push_str(": ");
        }
        s.push_str(&self.message);
        match (&c.expected, &c.found) {
            (Some(e), Some(f)) => s.push_str(&format!(": expected {e}, found {f}")),
            (Some(e), None) => s.push_str(&format!(": expected {e}")),
            (None, Some(f)) => s.push_str(&format!(": found {f}")),
            (None, None) => {}
        }
        s.push_str(&format!(" [{}]", self.status()));
        s
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            return f
                .debug_struct("Error")
                .field("kind", &self.kind)
                .field("message", &self.message)
                .field("context", &self.context)
                .finish();
        }
        write!(f, "{self}")?;
        write_causes(f, std::error::Error::source(self))
    }
}

/// `anyhow`'s layout of a cause chain: nothing without a cause; one cause on its own line; two or
/// more numbered from 0; a cause's further lines indented under its first.
fn write_causes(f: &mut fmt::Formatter<'_>, first: Option<&(dyn std::error::Error + 'static)>) -> fmt::Result {
    let Some(first) = first else { return Ok(()) };
    write!(f, "\n\nCaused by:")?;
    let several = first.source().is_some();
    let mut cause = Some(first);
    let mut n = 0;
    while let Some(c) = cause {
        let text = c.to_string();
        if several {
            write!(f, "\n    {n}: {}", text.replace('\n', "\n       "))?;
        } else {
            write!(f, "\n    {}", text.replace('\n', "\n    "))?;
        }
        n += 1;
        cause = c.source();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_context_and_status() {
        let e = Error::new(ErrorKind::InvalidFormat, "output meta data does not match the object")
            .at_parameter(1)
            .in_kernel("org.example.blur")
            .in_node("blur")
            .in_graph("edges")
            .expected_found("U8 640x480", "S16 640x480");
        assert_eq!(
            e.to_string(),
            "graph 'edges', node 'blur' (kernel 'org.example.blur'), parameter 1: output meta data \
             does not match the object: expected U8 640x480, found S16 640x480 \
             [VX_ERROR_INVALID_FORMAT (-14)]"
        );
        assert_eq!(e.status().code(), -14);
    }

    fn edges_blur_error() -> Error {
        Error::new(ErrorKind::InvalidFormat, "output meta data does not match the object")
            .at_parameter(1)
            .in_kernel("org.example.blur")
            .in_node("blur")
            .in_graph("edges")
            .expected_found("U8 640x480", "S16 640x480")
    }

    #[test]
    fn debug_reads_like_display_and_the_alternate_form_dumps_the_fields() {
        let e = edges_blur_error();
        assert_eq!(format!("{e:?}"), e.to_string());
        let dump = format!("{e:#?}");
        assert!(dump.starts_with("Error {\n    kind: InvalidFormat,\n"), "{dump}");
        assert!(dump.contains("message: \"output meta data does not match the object\""), "{dump}");
        assert!(dump.contains("graph: Some(\n            \"edges\",\n        ),"), "{dump}");
        assert!(dump.contains("parameter: Some(\n            1,\n        ),"), "{dump}");
        // Inside a derived `Debug`, `{:?}` stays readable and `{:#?}` stays structured.
        let r: Result<()> = Err(Error::new(ErrorKind::Timeout, "no reply"));
        assert_eq!(format!("{r:?}"), "Err(no reply [VX_FAILURE (-1)])");
        assert!(format!("{r:#?}").contains("kind: Timeout"));
    }

    /// A chain of errors for the cause layout (`Error` itself has no source today).
    #[derive(Debug)]
    struct Link(&'static str, Option<Box<Link>>);

    impl fmt::Display for Link {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Link {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    /// `{:?}` of a chain the way `Error`'s `Debug` writes it.
    struct Shown<'a>(&'a Link);

    impl fmt::Debug for Shown<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{}", self.0)?;
            write_causes(f, std::error::Error::source(self.0))
        }
    }

    fn chain(texts: &[&'static str]) -> Link {
        let mut link = None;
        for t in texts.iter().rev() {
            link = Some(Link(t, link.map(Box::new)));
        }
        link.expect("one text at least")
    }

    #[test]
    fn causes_follow_under_caused_by_as_anyhow_writes_them() {
        assert_eq!(format!("{:?}", Shown(&chain(&["loading module 'm'"]))), "loading module 'm'");
        assert_eq!(
            format!("{:?}", Shown(&chain(&["loading module 'm'", "no such file"]))),
            "loading module 'm'\n\nCaused by:\n    no such file"
        );
        assert_eq!(
            format!("{:?}", Shown(&chain(&["loading module 'm'", "reading the header", "no such file"]))),
            "loading module 'm'\n\nCaused by:\n    0: reading the header\n    1: no such file"
        );
        assert_eq!(
            format!("{:?}", Shown(&chain(&["top", "two\nlines", "last"]))),
            "top\n\nCaused by:\n    0: two\n       lines\n    1: last"
        );
        assert_eq!(format!("{:?}", Shown(&chain(&["top", "two\nlines"]))), "top\n\nCaused by:\n    two\n    lines");
    }

    /// Set in the child process of `main_returning_err_prints_the_message`.
    const AS_MAIN: &str = "VX_ERROR_TEST_AS_MAIN";

    /// Not a check of its own: the `main` of the child process below (ignored, so a plain test run
    /// skips it). A test returning `Err` is reported by the same `Termination` impl as
    /// `fn main() -> vx::Result<()>` (`Error: {err:?}` on stderr, exit code 1). Outside the child
    /// (`--include-ignored`) it returns `Ok` at once.
    #[test]
    #[ignore = "the child process of main_returning_err_prints_the_message"]
    fn child_main_returning_err() -> Result<()> {
        if std::env::var_os(AS_MAIN).is_none() {
            return Ok(());
        }
        Err(edges_blur_error())
    }

    #[test]
    fn main_returning_err_prints_the_message() {
        let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args(["--exact", "error::tests::child_main_returning_err", "--ignored", "--nocapture", "--test-threads=1"])
            .env(AS_MAIN, "1")
            .output()
            .expect("the test binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        let expected = "Error: graph 'edges', node 'blur' (kernel 'org.example.blur'), parameter 1: output meta \
                        data does not match the object: expected U8 640x480, found S16 640x480 \
                        [VX_ERROR_INVALID_FORMAT (-14)]\n";
        assert!(stderr.lines().any(|l| format!("{l}\n") == expected), "stderr: {stderr}");
        assert!(!stderr.contains("ErrorContext") && !stderr.contains("kind:"), "a field dump: {stderr}");
    }

    #[test]
    fn kinds_round_trip_through_status() {
        for s in Status::ALL.into_iter().skip(1) {
            assert_eq!(ErrorKind::from_status(s).status(), s);
        }
    }
}
