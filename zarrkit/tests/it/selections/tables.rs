//! NumPy's documented edge cases, with the values NumPy 2 gives, and the
//! errors users read.
