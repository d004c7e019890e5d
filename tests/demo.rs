//! Integration tests for `prh-native demo` (filled by its issue).
