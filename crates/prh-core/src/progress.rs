//! Progress of long work, told to whoever runs it (the CLI draws a bar or prints status
//! lines, the page could update a status line) without the core knowing how it is shown.
//! Work that can run for minutes (the metrics' kernel pass and nulls, pair-free matching,
//! the gallery curve) takes an [`OnTick`] and calls it after each unit of a phase.

/// `done` of the `total` units of the phase `phase` are finished (`done` grows within a
/// phase; a new phase starts again from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// What is being done, in one word ("kernels", "null", "starts", ...).
    pub phase: &'static str,
    /// Units finished.
    pub done: usize,
    /// Units in the phase.
    pub total: usize,
}

/// Receives the ticks of one job; pass `&mut |_| {}` when nobody listens.
pub type OnTick<'a> = &'a mut dyn FnMut(Tick);

/// Calls `on_tick` for `done` of `total` units of `phase`.
pub fn tick(on_tick: &mut dyn FnMut(Tick), phase: &'static str, done: usize, total: usize) {
    on_tick(Tick { phase, done, total });
}
