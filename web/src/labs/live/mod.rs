//! The live lab (issue 21): two JEPAs — an image encoder and a caption encoder, each on
//! the symbols of its own modality's views of the demo's scene world — train *separately*
//! in this page while you watch their embeddings turn into the predicted representation F
//! and their CKA to F climb (sin Θ fall) step by step. Same core code as `prh-native
//! train` (`prh_core::experiments::live`, the shared training loop resumed piece by
//! piece), in a web worker ([`worker`]) so the page stays responsive: on WebGPU when the
//! browser has a hardware adapter, else on burn's CPU backend (or either, chosen). Pause, resume, reset, and switch good / bad views mid-run.

mod worker;

use crate::figures::draw;
use crate::figures::numbers;
use crate::figures::svg::Svg;
use crate::widgets::clock::now_ms;
use leptos::prelude::*;
use prh_core::experiments::demo::CurvePoint;
use std::rc::Rc;
use worker::{Command, Frame, PIECE, Trainer};

/// The lab's settings.
#[derive(Clone, PartialEq)]
struct Setup {
    small: bool,
    kind: String,
    loss: String,
    seed: u64,
    /// "auto", "webgpu" or "cpu".
    backend: String,
}

/// The lab's live state.
#[derive(Clone, Copy)]
struct State {
    frame: RwSignal<Option<Frame>>,
    error: RwSignal<Option<String>>,
    running: RwSignal<bool>,
    paused: RwSignal<bool>,
    /// `now_ms()` at start, for the elapsed time.
    started: RwSignal<f64>,
    /// Seconds from start to the latest frame.
    elapsed: RwSignal<f64>,
    /// Views now trained (they may change mid-run).
    kind: RwSignal<String>,
    /// Commands sent and not yet answered: the next piece is asked for only when none is
    /// (a change of views or a resume while a piece runs must not start a second chain).
    in_flight: RwSignal<usize>,
}

impl State {
    /// Nothing trained yet, on the good views.
    fn new() -> State {
        State {
            frame: RwSignal::new(None),
            error: RwSignal::new(None),
            running: RwSignal::new(false),
            paused: RwSignal::new(false),
            started: RwSignal::new(0.0),
            elapsed: RwSignal::new(0.0),
            kind: RwSignal::new("good".into()),
            in_flight: RwSignal::new(0),
        }
    }
}

/// The worker, if started: local (it holds JS closures) so that reset can replace it.
type TrainerSlot = StoredValue<Option<Rc<Trainer>>, LocalStorage>;

/// The live tab.
#[component]
pub fn LiveLab() -> impl IntoView {
    let setup = RwSignal::new(Setup {
        small: true,
        kind: "good".into(),
        loss: "spectral".into(),
        seed: 0,
        backend: "auto".into(),
    });
    let st = State::new();
    // The worker lives in a StoredValue so that reset can replace it; the frame handler
    // asks for the next piece while running.
    let trainer: TrainerSlot = StoredValue::new_local(None);
    let send = sender(st, trainer);
    let start = starter(setup, st, trainer, send);
    let pause = move || {
        if st.paused.get_untracked() {
            st.paused.set(false);
            if st.running.get_untracked() && st.in_flight.get_untracked() == 0 {
                send(Command::Advance { steps: PIECE });
            }
        } else {
            st.paused.set(true);
        }
    };
    let change_views = move |kind: String| {
        st.kind.set(kind.clone());
        if st.frame.with_untracked(Option::is_some) {
            st.running.set(true);
            // Applied between pieces: the worker handles one command at a time, in order.
            send(Command::Views { kind });
        }
    };
    view! {
        <p class="status">
            "Two JEPAs train here, separately, on the demo's scene world: an image encoder and a caption encoder, each seeing its own modality's views as symbols. "
            "Watch each one's embeddings (dots) turn into the predicted representation F (rings) and its CKA to F climb. "
            "Same code as "<code>"prh-native train"</code>", in a web worker: on WebGPU (burn's wgpu backend) when the browser has a GPU adapter, else on burn's CPU backend; both start from the same weights."
        </p>
        <Controls setup=setup st=st start=start pause=pause change_views=change_views />
        {move || st.error.get().map(|e| view! { <p class="error" id="live-error" role="alert">{e}</p> })}
        <Status st=st />
        <div class="grid">
            <Scatter st=st m=0 title="image encoder" />
            <Scatter st=st m=1 title="caption encoder" />
            <Curves st=st />
        </div>
        <Reproduce st=st />
    }
}

/// Sends a command to the worker (if any), counting it in flight; a failed send is shown.
fn sender(st: State, trainer: TrainerSlot) -> impl Fn(Command) + Copy + 'static {
    move |cmd: Command| match trainer.get_value().map(|t| t.send(&cmd)) {
        Some(Ok(())) => st.in_flight.update(|n| *n += 1),
        Some(Err(e)) => st.error.set(Some(e)),
        None => {}
    }
}

/// Handles the worker's answer: shows the frame (or the error) and, while running and not
/// paused, asks for the next piece once nothing else is in flight.
fn frame_handler(
    st: State,
    send: impl Fn(Command) + Copy + 'static,
) -> impl Fn(Result<Frame, String>) + Copy + 'static {
    move |msg: Result<Frame, String>| match msg {
        Err(e) => {
            st.in_flight.set(0);
            st.error.set(Some(e));
            st.running.set(false);
        }
        Ok(f) => {
            st.in_flight.update(|n| *n = n.saturating_sub(1));
            let done = f.finished;
            // The TOML comes on start only, and a command that trained nothing (a change of
            // views) sends no points: keep the previous ones.
            let mut f = f;
            st.frame.with_untracked(|prev| {
                if let Some(prev) = prev {
                    if f.toml.is_none() {
                        f.toml = prev.toml.clone();
                    }
                    if f.backend.is_none() {
                        f.backend = prev.backend.clone();
                    }
                    for m in 0..2 {
                        if f.points[m].is_empty() {
                            f.points[m] = prev.points[m].clone();
                            f.predicted[m] = prev.predicted[m].clone();
                        }
                    }
                }
            });
            st.frame.set(Some(f));
            st.elapsed
                .set((now_ms() - st.started.get_untracked()) / 1000.0);
            if done {
                st.running.set(false);
            } else if st.running.get_untracked()
                && !st.paused.get_untracked()
                && st.in_flight.get_untracked() == 0
            {
                send(Command::Advance { steps: PIECE });
            }
        }
    }
}

/// Starts (or restarts) a run with the current setup: a fresh worker, cleared state, and
/// the start command.
fn starter(
    setup: RwSignal<Setup>,
    st: State,
    trainer: TrainerSlot,
    send: impl Fn(Command) + Copy + 'static,
) -> impl Fn() + Copy + 'static {
    let on_frame = frame_handler(st, send);
    move || {
        let s = setup.get_untracked();
        st.error.set(None);
        st.frame.set(None);
        st.paused.set(false);
        st.kind.set(s.kind.clone());
        st.in_flight.set(0);
        match Trainer::new(on_frame) {
            Err(e) => st.error.set(Some(e)),
            Ok(t) => {
                trainer.set_value(Some(Rc::new(t)));
                st.running.set(true);
                st.started.set(now_ms());
                send(Command::Start {
                    small: s.small,
                    kind: s.kind,
                    loss: s.loss,
                    seed: s.seed,
                    backend: s.backend,
                });
            }
        }
    }
}

/// World, views, loss, seed and the run buttons.
#[component]
fn Controls(
    setup: RwSignal<Setup>,
    st: State,
    start: impl Fn() + Copy + 'static,
    pause: impl Fn() + Copy + 'static,
    change_views: impl Fn(String) + Copy + 'static,
) -> impl IntoView {
    view! {
        <div class="controls">
            <label>"world "
                <select id="live-world" on:change=move |ev| { let small = event_target_value(&ev) == "small"; setup.update(|s| s.small = small); }>
                    <option value="small" selected=true>"small (72 states, d = 8)"</option>
                    <option value="demo">"the demo's (192 states, d = 11)"</option>
                </select>
            </label>
            <label>"views "
                <select id="live-views" on:change=move |ev| { let k = event_target_value(&ev); setup.update(|s| s.kind = k.clone()); change_views(k); }>
                    <option value="good" selected=true>"good (two observations of one scene)"</option>
                    <option value="bad">"bad (two spans of one caption)"</option>
                </select>
            </label>
            <label>"loss "
                <select id="live-loss" on:change=move |ev| { let l = event_target_value(&ev); setup.update(|s| s.loss = l); }>
                    <option value="spectral" selected=true>"spectral (the theorem's)"</option>
                    <option value="sigreg">"SIGReg (the paper's)"</option>
                </select>
            </label>
            <label title="auto: WebGPU on a hardware adapter, else the CPU backend (a software adapter such as SwiftShader emulates the GPU on the CPU, slower than the CPU backend)">"backend "
                <select id="live-backend" on:change=move |ev| { let b = event_target_value(&ev); setup.update(|s| s.backend = b); }>
                    <option value="auto" selected=true>"auto"</option>
                    <option value="webgpu">"WebGPU"</option>
                    <option value="cpu">"CPU"</option>
                </select>
            </label>
            <label>"seed "<input type="number" id="live-seed" min="0" prop:value=move || setup.with(|s| s.seed.to_string())
                on:change=move |ev| { if let Ok(v) = event_target_value(&ev).trim().parse::<u64>() { setup.update(|s| s.seed = v); } } /></label>
            <button id="live-start" on:click=move |_| start()>{move || if st.frame.with(Option::is_some) { "reset and start again" } else { "start training" }}</button>
            <button id="live-pause" disabled=move || !st.running.get() on:click=move |_| pause()>
                {move || if st.paused.get() { "resume" } else { "pause" }}</button>
        </div>
    }
}

/// Step, time and each encoder's CKA / sin Θ to F, also as data attributes for tests.
#[component]
fn Status(st: State) -> impl IntoView {
    move || {
        let f = st.frame.get()?;
        let (a, b) = (f.curves[0].last().cloned(), f.curves[1].last().cloned());
        let (backend, why) = f.backend.clone().unwrap_or_default();
        let num = |p: &Option<CurvePoint>, g: fn(&CurvePoint) -> f64| {
            p.as_ref().map_or(String::new(), |p| g(p).to_string())
        };
        let text = format!(
            "step {} / {} · {:.1} s on {} · {} views · image CKA to F {} (sin Θ {}), caption CKA to F {} (sin Θ {}){}{}",
            f.steps[0].max(f.steps[1]),
            f.budget,
            st.elapsed.get(),
            backend,
            st.kind.get(),
            a.as_ref()
                .map_or("–".into(), |p| numbers::fixed(p.cka_to_theory, 3)),
            a.as_ref()
                .map_or("–".into(), |p| numbers::fixed(p.sin_theta_to_theory, 3)),
            b.as_ref()
                .map_or("–".into(), |p| numbers::fixed(p.cka_to_theory, 3)),
            b.as_ref()
                .map_or("–".into(), |p| numbers::fixed(p.sin_theta_to_theory, 3)),
            if f.finished {
                " · finished (plateau or budget)"
            } else {
                ""
            },
            if st.paused.get() { " · paused" } else { "" },
        );
        Some(view! {
            <p class="status" id="live-status" title=why data-backend=backend data-step=f.steps[0].max(f.steps[1]).to_string() data-finished=f.finished.to_string()
                data-elapsed=st.elapsed.get().to_string() data-views=st.kind.get()
                data-cka-image=num(&a, |p| p.cka_to_theory) data-cka-text=num(&b, |p| p.cka_to_theory)
                data-sin-image=num(&a, |p| p.sin_theta_to_theory) data-sin-text=num(&b, |p| p.sin_theta_to_theory)
                data-worker-ms=f.ms.to_string() data-curves=serde_json::to_string(&f.curves).unwrap_or_default()>{text}</p>
        })
    }
}

/// One encoder's embeddings (turned onto F) over F's points.
#[component]
fn Scatter(st: State, m: usize, title: &'static str) -> impl IntoView {
    let svg = move || {
        let f = st.frame.get()?;
        let (pts, pred) = (&f.points[m], &f.predicted[m]);
        if pts.is_empty() {
            return None;
        }
        let ext = draw::fit_extent(&pred.iter().chain(pts.iter()).copied().collect::<Vec<_>>());
        let (w, h) = (300.0, 300.0);
        let mut s = Svg::new(w, h);
        let px = |p: &(f64, f64)| draw::to_px_in(w, h, ext, *p);
        for p in pts {
            let (x, y) = px(p);
            s.circle(
                "pt",
                (x, y, 2.5),
                if m == 0 { "#1f77b4" } else { "#d62728" },
                None,
            );
        }
        // Rings on top, so the prediction stays visible under the dots that reach it.
        for p in pred {
            let (x, y) = px(p);
            s.circle("ring", (x, y, 9.0), "none", Some(("#222", 1.5)));
        }
        Some(s.finish())
    };
    view! {
        <div class="card">
            <h2>{title}</h2>
            <div id=format!("live-scatter-{m}") inner_html=move || svg().unwrap_or_default()></div>
            <p class="explain">"Rings: the predicted F (first two coordinates). Dots: this encoder's embeddings of the same states, whitened and turned onto F by the best rotation. When training reaches the prediction, the dots sit in the rings."</p>
        </div>
    }
}

fn cka(p: &CurvePoint) -> f64 {
    p.cka_to_theory
}

fn sin(p: &CurvePoint) -> f64 {
    p.sin_theta_to_theory
}

/// CKA and sin Θ to F against the step, both encoders.
#[component]
fn Curves(st: State) -> impl IntoView {
    let svg = move || {
        let f = st.frame.get()?;
        let (w, h, pad) = (440.0, 220.0, 30.0);
        let max_step = f.curves.iter().flatten().map(|p| p.step).max()?.max(1) as f64;
        let mut s = Svg::new(w, h);
        s.line((pad, h - pad, w - 5.0, h - pad), "#999", "");
        s.line((pad, 5.0, pad, h - pad), "#999", "");
        s.text((2.0, 12.0), 10.0, "#555", "1");
        s.text((2.0, h - pad), 10.0, "#555", "0");
        s.text(
            (w - 60.0, h - 8.0),
            10.0,
            "#555",
            &format!("step {}", max_step as usize),
        );
        let xy = |step: usize, v: f64| {
            (
                pad + (w - pad - 5.0) * step as f64 / max_step,
                h - pad - (h - pad - 5.0) * v.clamp(0.0, 1.0),
            )
        };
        for (m, colour) in [(0, "#1f77b4"), (1, "#d62728")] {
            for (get, dash) in [(cka as fn(&CurvePoint) -> f64, ""), (sin, "4 3")] {
                let c = &f.curves[m];
                for pair in c.windows(2) {
                    let (a, b) = (
                        xy(pair[0].step, get(&pair[0])),
                        xy(pair[1].step, get(&pair[1])),
                    );
                    s.line((a.0, a.1, b.0, b.1), colour, dash);
                }
            }
        }
        Some(s.finish())
    };
    view! {
        <div class="card">
            <h2>"alignment to the prediction"</h2>
            <div id="live-curves" inner_html=move || svg().unwrap_or_default()></div>
            <p class="explain">"Solid: CKA to F (1 = the predicted representation up to a rotation). Dashed: sin Θ between the encoder's subspace and F's (0 = the same). Blue: image encoder; red: caption encoder. Each point is one evaluation, every 25 steps."</p>
        </div>
    }
}

/// The two runs as TOML, for `prh-native train --config`.
#[component]
fn Reproduce(st: State) -> impl IntoView {
    move || {
        let toml = st.frame.with(|f| f.as_ref().and_then(|f| f.toml.clone()))?;
        Some(view! {
            <details class="card">
                <summary>"the same runs on the command line: prh-native train --config image.toml (and caption.toml)"</summary>
                <p class="explain">"Until the views are changed, the pieces trained here add up to exactly these runs (on the native CPU backend the numbers agree to float rounding, which grows over steps)."</p>
                <textarea id="live-toml-0" readonly rows="6" cols="80" aria-label="image run as TOML" prop:value=toml[0].clone()></textarea>
                <textarea id="live-toml-1" readonly rows="6" cols="80" aria-label="caption run as TOML" prop:value=toml[1].clone()></textarea>
            </details>
        })
    }
}
