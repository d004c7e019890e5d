//! The guided lesson (the playground's landing page): eleven steps that build the theorem
//! from a finite world to measuring real embeddings, each with a short text (formulas in
//! MathML), one live figure from the labs preset to that step, a "try this" prompt and a
//! question the page checks from its own computation. In English and Korean.
//!
//! - Each step has its own URL (`?lab=lesson&step=spectrum&lang=ko`).
//! - Presenter mode: full screen, large type for a 1280 x 720 projector; arrow keys and
//!   Page Up / Page Down (what presentation clickers send) step through; Home / End.
//! - Handout (`?lab=lesson&handout=1`): every step on its own printed page (print CSS),
//!   which the end-to-end test turns into a PDF with headless Chromium.
//!
//! [`content`] holds the words, [`math`] renders them, [`figure`] draws each step's figure
//! and [`question`] computes and checks each answer.

mod content;
mod figure;
mod math;
mod question;

use crate::widgets::url_state;
use content::{CHROME, Lang, STEPS, Step, index_of};
use figure::StepFigure;
use leptos::prelude::*;
use question::Question;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

/// The lesson's root element id (presenter mode makes it full screen).
const ROOT: &str = "lesson";

/// One step: title, text, figure, try-this and question.
#[component]
fn StepView(step: &'static Step, index: usize, lang: Signal<Lang>) -> impl IntoView {
    view! {
        <section class="lesson-step" id=format!("lesson-step-{}", step.key) data-step=step.key>
            <p class="step-count">{move || format!("{} {} / {}", CHROME.step.get(lang.get()), index + 1, STEPS.len())}</p>
            <h2 class="step-title" inner_html=move || math::render_inline(step.title.get(lang.get()))></h2>
            <div class="step-body" inner_html=move || math::render(step.body.get(lang.get()))></div>
            <div class="step-figure"><StepFigure step=step lang=lang /></div>
            <div class="try-this">
                <strong>{move || CHROME.try_this.get(lang.get())}": "</strong>
                <span inner_html=move || math::render_inline(step.try_this.get(lang.get()))></span>
            </div>
            <Question ask=step.ask prompt=step.question lang=lang prefix=step.key />
        </section>
    }
}

/// Whether a key press belongs to a form control (arrow keys move a slider or a caret there).
fn in_control(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"))
}

/// Whether the lesson is on screen (its tab shown).
fn lesson_visible() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(ROOT))
        .is_some_and(|e| e.get_client_rects().length() > 0)
}

/// Arrow keys, Page Up / Down (clickers), Home and End move through the steps.
fn listen_keys(step: RwSignal<usize>) {
    let on_key =
        Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(move |ev: web_sys::KeyboardEvent| {
            if in_control(&ev)
                || !lesson_visible()
                || ev.alt_key()
                || ev.ctrl_key()
                || ev.meta_key()
            {
                return;
            }
            let last = STEPS.len() - 1;
            let now = step.get_untracked();
            let next = match ev.key().as_str() {
                "ArrowRight" | "PageDown" => now.saturating_add(1).min(last),
                "ArrowLeft" | "PageUp" => now.saturating_sub(1),
                "Home" => 0,
                "End" => last,
                _ => return,
            };
            ev.prevent_default();
            step.set(next);
        });
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    }
    // The listener lives as long as the page (the lesson is never unmounted).
    on_key.forget();
}

/// Presenter mode on: the lesson full screen (where the browser allows it) with large type.
fn present(presenting: RwSignal<bool>) {
    presenting.set(true);
    let doc = web_sys::window().and_then(|w| w.document());
    if let Some(el) = doc.as_ref().and_then(|d| d.get_element_by_id(ROOT)) {
        let _ = el.request_fullscreen();
    }
    // Leaving full screen (Escape) leaves presenter mode.
    let on_change = Closure::<dyn FnMut()>::new(move || {
        let full = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.fullscreen_element());
        if full.is_none() {
            presenting.set(false);
        }
    });
    if let Some(d) = doc {
        let _ = d.add_event_listener_with_callback(
            "fullscreenchange",
            on_change.as_ref().unchecked_ref(),
        );
    }
    on_change.forget();
}

/// The lesson tab.
#[component]
pub fn LessonLab() -> impl IntoView {
    let lang = RwSignal::new(Lang::parse(&url_state::get("lang", String::new())));
    let step = RwSignal::new(index_of(&url_state::get("step", String::new())).unwrap_or(0));
    let handout = url_state::get("handout", 0_u8) != 0;
    let presenting = RwSignal::new(url_state::get("present", 0_u8) != 0);
    Effect::new(move |_| {
        url_state::update(&[
            (
                "step",
                (!handout).then(|| STEPS[step.get()].key.to_string()),
            ),
            ("lang", Some(lang.get().key().to_string())),
        ]);
    });
    listen_keys(step);
    let lang_sig: Signal<Lang> = lang.into();
    let lang_button = move |l: Lang, label: &'static str| {
        view! {
            <button class="lang" id=format!("lang-{}", l.key()) aria-pressed=move || (lang.get() == l).to_string()
                class:active=move || lang.get() == l on:click=move |_| lang.set(l)>{label}</button>
        }
    };
    let handout_href = move || format!("?lab=lesson&handout=1&lang={}", lang.get().key());
    view! {
        <div id=ROOT class="lesson" class:presenting=move || presenting.get()>
            <div class="lesson-bar no-print" role="toolbar" aria-label="lesson controls">
                {lang_button(Lang::En, "English")}
                {lang_button(Lang::Ko, "한국어")}
                <button id="lesson-present" on:click=move |_| present(presenting)>{move || CHROME.present.get(lang.get())}</button>
                <a id="lesson-handout" href=handout_href>{move || CHROME.handout.get(lang.get())}</a>
                <span class="status">{move || CHROME.keys.get(lang.get())}</span>
            </div>
            {if handout {
                STEPS.iter().enumerate().map(|(i, s)| view! { <StepView step=s index=i lang=lang_sig /> }).collect_view().into_any()
            } else {
                view! { <Stepper step=step lang=lang_sig /> }.into_any()
            }}
        </div>
    }
}

/// One step at a time, with the step list and previous / next buttons.
#[component]
fn Stepper(step: RwSignal<usize>, lang: Signal<Lang>) -> impl IntoView {
    let last = STEPS.len() - 1;
    view! {
        <nav class="step-list no-print" aria-label="lesson steps">
            {STEPS.iter().enumerate().map(|(i, s)| view! {
                <button class="step-dot" id=format!("goto-{}", s.key) aria-label=move || format!("{} {}: {}", CHROME.step.get(lang.get()), i + 1, s.title.get(lang.get()))
                    aria-current=move || (step.get() == i).then_some("step") class:active=move || step.get() == i
                    on:click=move |_| step.set(i)>{(i + 1).to_string()}</button>
            }).collect_view()}
        </nav>
        {move || {
            let i = step.get();
            view! { <StepView step=&STEPS[i] index=i lang=lang /> }
        }}
        <div class="step-buttons no-print">
            <button id="lesson-prev" disabled=move || step.get() == 0 on:click=move |_| step.update(|s| *s = s.saturating_sub(1))>
                {move || CHROME.prev.get(lang.get())}</button>
            <button id="lesson-next" disabled=move || step.get() == last on:click=move |_| step.update(|s| *s = (*s + 1).min(last))>
                {move || CHROME.next.get(lang.get())}</button>
        </div>
    }
}
