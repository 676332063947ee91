//! The Streamable HTTP client transport.
