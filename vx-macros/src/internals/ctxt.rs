//! Error collection in the style of serde_derive's `Ctxt`: record every error with its span, report
//! them all at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Record an error pointing at `obj`.
    pub(crate) fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt checked twice")
            .push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Record an error at a span.
    pub(crate) fn syn_error_at<T: Display>(&self, span: proc_macro2::Span, msg: T) {
        self.errors.borrow_mut().as_mut().expect("Ctxt checked twice").push(syn::Error::new(span, msg));
    }

    /// All errors combined, or Ok.
    pub(crate) fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.borrow_mut().take().expect("Ctxt checked twice").into_iter();
        let Some(mut combined) = errors.next() else { return Ok(()) };
        for e in errors {
            combined.combine(e);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
