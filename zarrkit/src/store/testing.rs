//! The conformance suite every store backend runs. (Stub.)
