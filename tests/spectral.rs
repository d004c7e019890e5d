//! Integration tests for `prh-native spectral` (filled by its issue).
