//! Each step's question and its answer, computed by the page from the same code as the
//! step's figure (never typed in): the 6-cycle's second eigenvalue comes from
//! `prh_core::theory::graph::analyse`, the rotation residual from the spectral lab's
//! `compute`, the demo's winner from the exported run.

use super::content::{Ask, CHROME, Lang, Text};
use super::figure::{DEMO_RESULTS, lesson_settings, measure};
use super::math;
use crate::labs::spectral;
use leptos::prelude::*;
use prh_core::theory::graph::{Graph, GraphPreset, analyse};
use prh_core::theory::theorem::compare;
use prh_core::theory::world::{Preset, PresetSpec, World};

/// A question's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A number, right within `tol` (absolute).
    Number {
        /// The value.
        value: f64,
        /// Accepted distance.
        tol: f64,
    },
    /// One of `options` (shown as buttons); `correct` is its index.
    Choice {
        /// The options.
        options: Vec<&'static str>,
        /// Index of the right one.
        correct: usize,
    },
}

/// A number answer accepting what a reader types from a figure with 4 decimals.
fn number(value: f64) -> Answer {
    Answer::Number {
        value,
        tol: 6e-4_f64.max(1e-3 * value.abs()),
    }
}

/// The analysis of a preset graph.
fn graph(p: GraphPreset, n: usize) -> Result<prh_core::theory::graph::GraphAnalysis, String> {
    let g = Graph::preset(p, n).map_err(|e| e.to_string())?;
    analyse(&g).map_err(|e| e.to_string())
}

/// The spectral lab's numbers for the lesson's world at `alpha`.
fn lab(alpha: f64) -> Result<spectral::Lab, String> {
    spectral::compute_lab(&lesson_settings(alpha))
}

/// The answer to `ask`, computed.
pub fn answer(ask: Ask) -> Result<Answer, String> {
    Ok(match ask {
        Ask::Observations => {
            let w = World::preset(&PresetSpec {
                preset: Preset::Scenes,
                n: 12,
                ..PresetSpec::default()
            })
            .map_err(|e| e.to_string())?;
            number((w.n() * w.modalities[0].q.len()) as f64)
        }
        Ask::CyclePairs => number(
            Graph::preset(GraphPreset::Cycle, 6)
                .map_err(|e| e.to_string())?
                .edges
                .len() as f64,
        ),
        Ask::PathDegree => number(graph(GraphPreset::Path, 4)?.kernel.p[0]),
        Ask::PathK01 => number(graph(GraphPreset::Path, 4)?.kernel.k[(0, 1)]),
        Ask::CycleLambda2 => number(graph(GraphPreset::Cycle, 6)?.spectrum.values[1]),
        Ask::CliquesGap => {
            let v = graph(GraphPreset::TwoCliques, 10)?.spectrum.values;
            number(v[1] - v[2])
        }
        Ask::GoodResidual => number(lab(0.0)?.cross.check.residual),
        Ask::BadGap => number(
            lab(1.0)?
                .spectrum
                .gap(4, true)
                .map_err(|e| e.to_string())?
                .ok_or("no eigenvalue after the window")?,
        ),
        Ask::SinTheta => {
            let before = graph(GraphPreset::TwoCliques, 10)?;
            let mut g = Graph::preset(GraphPreset::TwoCliques, 10).map_err(|e| e.to_string())?;
            g.set_pair(1, 8, 4.0).map_err(|e| e.to_string())?;
            let after = analyse(&g).map_err(|e| e.to_string())?;
            let c = compare(
                &before.kernel,
                &before.spectrum,
                &after.kernel,
                &after.spectrum,
                1,
                true,
            )
            .map_err(|e| e.to_string())?;
            number(c.sin_theta_op)
        }
        Ask::DemoWinner => demo_winner()?,
        Ask::RotatedCka => number(measure(0.0).map_err(|e| e.to_string())?.cka),
    })
}

/// Which loss reached the higher learned mutual 10-NN on symbols under good views.
fn demo_winner() -> Result<Answer, String> {
    let v: serde_json::Value = serde_json::from_str(DEMO_RESULTS).map_err(|e| e.to_string())?;
    let score = |loss: &str| {
        v["results"].as_array().and_then(|r| {
            r.iter()
                .find(|e| {
                    e["loss"] == loss && e["kind"] == "good" && e["observation"] == "symbolic"
                })
                .and_then(|e| e["learned"]["mutual_knn"].as_f64())
        })
    };
    match (score("spectral"), score("sigreg")) {
        (Some(a), Some(b)) => Ok(Answer::Choice {
            options: vec!["spectral", "SIGReg"],
            correct: usize::from(b > a),
        }),
        _ => Err("demo_results.json has no good-view symbol rows for both losses".into()),
    }
}

/// A typed number: a decimal, or a fraction `a/b`.
pub fn parse_number(s: &str) -> Option<f64> {
    let s = s.trim().replace(',', ".");
    if let Some((a, b)) = s.split_once('/') {
        let (a, b) = (a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?);
        return (b != 0.0).then_some(a / b).filter(|v| v.is_finite());
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The feedback line's state.
#[derive(Clone, Copy, PartialEq)]
enum Verdict {
    None,
    Right,
    Wrong,
    NotNumber,
    Revealed,
}

/// The question of a step: the prompt, an input (or option buttons), Check, the verdict
/// and "show the answer".
#[component]
pub fn Question(ask: Ask, prompt: Text, lang: Signal<Lang>, prefix: &'static str) -> impl IntoView {
    let computed = answer(ask);
    let verdict = RwSignal::new(Verdict::None);
    let typed = RwSignal::new(String::new());
    let shown = match &computed {
        Ok(Answer::Number { value, .. }) => crate::figures::numbers::fixed(*value, 4),
        Ok(Answer::Choice { options, correct }) => options[*correct].to_string(),
        Err(e) => e.clone(),
    };
    let judge = {
        let computed = computed.clone();
        Callback::new(move |input: String| {
            verdict.set(match &computed {
                Ok(Answer::Number { value, tol }) => match parse_number(&input) {
                    None => Verdict::NotNumber,
                    Some(x) if (x - value).abs() <= *tol => Verdict::Right,
                    Some(_) => Verdict::Wrong,
                },
                Ok(Answer::Choice { options, correct }) => {
                    if options.get(*correct).is_some_and(|o| *o == input) {
                        Verdict::Right
                    } else {
                        Verdict::Wrong
                    }
                }
                Err(_) => Verdict::None,
            })
        })
    };
    let input = match &computed {
        Ok(Answer::Choice { options, .. }) => options
            .iter()
            .map(|o| {
                let o = *o;
                view! { <button class="choice" data-option=o on:click=move |_| judge.run(o.to_string())>{o}</button> }
            })
            .collect_view()
            .into_any(),
        _ => {
            view! {
                <input type="text" inputmode="decimal" class="answer" id=format!("{prefix}-answer") aria-label="your answer"
                    prop:value=move || typed.get() on:input=move |ev| typed.set(event_target_value(&ev))
                    on:keydown=move |ev: web_sys::KeyboardEvent| { if ev.key() == "Enter" { judge.run(typed.get_untracked()) } } />
                <button class="check" id=format!("{prefix}-check") on:click=move |_| judge.run(typed.get_untracked())>
                    {move || CHROME.check.get(lang.get())}
                </button>
            }
            .into_any()
        }
    };
    let feedback = move || {
        let l = lang.get();
        match verdict.get() {
            Verdict::None => String::new(),
            Verdict::Right => CHROME.right.get(l).to_string(),
            Verdict::Wrong => CHROME.wrong.get(l).to_string(),
            Verdict::NotNumber => CHROME.not_number.get(l).to_string(),
            Verdict::Revealed => shown.clone(),
        }
    };
    let class = move || match verdict.get() {
        Verdict::Right => "verdict right",
        Verdict::Wrong | Verdict::NotNumber => "verdict wrong",
        _ => "verdict",
    };
    view! {
        <div class="question" role="group" aria-label="question">
            <h3>{move || CHROME.question.get(lang.get())}</h3>
            <p inner_html=move || math::render_inline(prompt.get(lang.get()))></p>
            <div class="answer-row">{input}
                <button class="link reveal no-print" on:click=move |_| verdict.set(Verdict::Revealed)>{move || CHROME.reveal.get(lang.get())}</button>
            </div>
            <p class=class aria-live="polite" data-verdict=move || match verdict.get() {
                Verdict::Right => "right", Verdict::Wrong => "wrong", Verdict::NotNumber => "not-number", Verdict::Revealed => "revealed", Verdict::None => "",
            }>{feedback}</p>
        </div>
    }
}
