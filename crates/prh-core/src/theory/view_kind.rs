//! The one view-kind vocabulary of prh (paper §3's table): which two observations make a
//! positive pair. The theory's pair graphs ([`crate::theory::pair_graph::Pairing`], which
//! adds the drift and mixture parameters), the scene world, the text views and every
//! training config (`run.objective`) use this type.

use serde::{Deserialize, Serialize};

/// Which positive pairs an encoder is trained on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViewKind {
    /// Good views: two observations of one state that share nothing else (two captions of
    /// one image, two renderings of one scene).
    Good,
    /// Bad views: two corruptions of one observation, which also share its nuisance (two
    /// spans of one text).
    Bad,
    /// Next-token prediction: a prefix and its continuation (one observation, so the
    /// nuisance is shared, as for bad views). Not a JEPA: text tasks train it with
    /// cross-entropy, and scene tasks reject it.
    NextToken,
}

impl ViewKind {
    /// Every kind, in the paper's order.
    pub const ALL: [ViewKind; 3] = [ViewKind::Good, ViewKind::Bad, ViewKind::NextToken];

    /// The name configs and reports use: `good`, `bad`, `next-token`.
    pub fn label(self) -> &'static str {
        match self {
            ViewKind::Good => "good",
            ViewKind::Bad => "bad",
            ViewKind::NextToken => "next-token",
        }
    }
}

impl std::fmt::Display for ViewKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde spelling is the label (what config files write).
    #[test]
    fn serde_spelling_is_the_label() {
        for k in ViewKind::ALL {
            let s = serde_json::to_string(&k).unwrap();
            assert_eq!(s, format!("\"{}\"", k.label()));
            assert_eq!(serde_json::from_str::<ViewKind>(&s).unwrap(), k);
        }
    }
}
