//! `backend::seeded` + `backend::materialise` make concurrent model initialisations
//! repeatable, in a process of its own: burn's CPU backends draw initial weights from one
//! process-wide generator, and in the library's unit-test binary other tests draw from it
//! on other threads without the lock.

use burn::backend::NdArray;
use burn::nn::LinearConfig;
use prh_core::backend::{materialise, seeded};

/// Two threads initialising the same seeded model at once get the same weights, every
/// time: the lock covers the seeding and every draw (the weights are materialised inside
/// it, not at their first use, which burn's lazy parameters would otherwise defer to).
#[test]
fn concurrent_seeded_inits_are_repeatable() {
    let dev = Default::default();
    let init = || {
        seeded::<NdArray, _>(&dev, 7, || {
            let m = LinearConfig::new(48, 48).init::<NdArray>(&dev);
            materialise(&m);
            m
        })
    };
    let reference = init().weight.val().into_data();
    let all: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    (0..200)
                        .map(|_| init().weight.val().into_data())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    for w in all {
        assert_eq!(w, reference);
    }
}
