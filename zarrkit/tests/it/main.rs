//! zarrkit's integration tests: one binary, one module per topic.

mod formats;
mod interop;
