//! The single integration-test binary: one module per topic.

mod formats;
mod stores;
