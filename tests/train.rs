//! Integration tests for `prh-native train` (filled by its issue).
