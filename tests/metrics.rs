//! Integration tests for `prh-native metrics` (filled by its issue).
