//! The prh playground: `prh-core` compiled to WebAssembly behind a Leptos (client-side)
//! UI. Build with `trunk build` (index.html at the repository root) or `.ci/web.sh`.
//!
//! This file only wires the tabs:
//! - [`labs`]: one folder per lab ([`spectral`], [`alignment`], [`checkpoint`], [`caption`]);
//! - [`figures`]: drawing, SVG and PNG / SVG / JSON export shared by the labs;
//! - [`widgets`]: the state in the URL ([`url_state`]), file loading, shared controls.

mod figures;
mod labs;
mod widgets;

use crate::labs::{alignment, caption, checkpoint, graph, lesson, live, spectral};
use crate::widgets::url_state;
use leptos::prelude::*;

/// Which lab is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lab {
    Lesson,
    Spectral,
    Graph,
    Live,
    Alignment,
    Checkpoint,
    Caption,
}

impl Lab {
    fn key(self) -> &'static str {
        match self {
            Lab::Lesson => "lesson",
            Lab::Spectral => "spectral",
            Lab::Graph => "graph",
            Lab::Live => "live",
            Lab::Alignment => "alignment",
            Lab::Checkpoint => "checkpoint",
            Lab::Caption => "caption",
        }
    }
}

/// The page: a tab bar and the selected lab. A lab is built on its first visit and then
/// only hidden when another tab is shown, so its controls, loaded files and results stay
/// (and its keys stay in the URL, see [`url_state::update`]).
#[component]
fn App() -> impl IntoView {
    let first = match url_state::get("lab", String::new()).as_str() {
        "alignment" => Lab::Alignment,
        "checkpoint" => Lab::Checkpoint,
        "caption" => Lab::Caption,
        "spectral" => Lab::Spectral,
        "graph" => Lab::Graph,
        "live" => Lab::Live,
        // The lesson is the landing page.
        _ => Lab::Lesson,
    };
    let lab = RwSignal::new(first);
    let visited = [
        Lab::Lesson,
        Lab::Spectral,
        Lab::Graph,
        Lab::Live,
        Lab::Alignment,
        Lab::Checkpoint,
        Lab::Caption,
    ]
    .map(|l| RwSignal::new(l == first));
    let index = |l: Lab| match l {
        Lab::Lesson => 0,
        Lab::Spectral => 1,
        Lab::Graph => 2,
        Lab::Live => 3,
        Lab::Alignment => 4,
        Lab::Checkpoint => 5,
        Lab::Caption => 6,
    };
    Effect::new(move |_| {
        let l = lab.get();
        // Only the first visit builds the lab; setting `true` again would rebuild it.
        if !visited[index(l)].get_untracked() {
            visited[index(l)].set(true);
        }
        url_state::update(&[("lab", Some(l.key().to_string()))]);
    });
    let tab = move |l: Lab, title: &'static str| {
        view! {
            <button class="tab" id=format!("tab-{}", l.key()) class:active=move || lab.get() == l on:click=move |_| lab.set(l)>
                {title}
            </button>
        }
    };
    // One lab's panel: empty until first shown, then kept and only hidden.
    let panel = move |l: Lab| {
        let seen = visited[index(l)];
        view! {
            <div id=format!("panel-{}", l.key()) style:display=move || if lab.get() == l { "block" } else { "none" }>
                {move || seen.get().then(|| match l {
                    Lab::Lesson => view! { <lesson::LessonLab /> }.into_any(),
                    Lab::Spectral => view! { <spectral::SpectralLab /> }.into_any(),
                    Lab::Graph => view! { <graph::GraphLab /> }.into_any(),
                    Lab::Live => view! { <live::LiveLab /> }.into_any(),
                    Lab::Alignment => view! { <alignment::AlignmentLab /> }.into_any(),
                    Lab::Checkpoint => view! { <checkpoint::CheckpointLab /> }.into_any(),
                    Lab::Caption => view! { <caption::CaptionLab /> }.into_any(),
                })}
            </div>
        }
    };
    view! {
        <header>
            <h1>"prh playground"</h1>
            <p class="sub">
                "The Platonic Representation Theorem, runnable: the same Rust code as the "
                <code>"prh-native"</code>
                " CLI, compiled to WebAssembly and running in this page."
            </p>
            <nav>
                {tab(Lab::Lesson, "Lesson")}
                {tab(Lab::Spectral, "Spectral lab")}
                {tab(Lab::Graph, "Draw a world")}
                {tab(Lab::Live, "Train live")}
                {tab(Lab::Alignment, "Alignment lab")}
                {tab(Lab::Checkpoint, "Checkpoint lab")}
                {tab(Lab::Caption, "Caption lab")}
            </nav>
        </header>
        <main>
            {panel(Lab::Lesson)}
            {panel(Lab::Spectral)}
            {panel(Lab::Graph)}
            {panel(Lab::Live)}
            {panel(Lab::Alignment)}
            {panel(Lab::Checkpoint)}
            {panel(Lab::Caption)}
        </main>
    }
}

fn main() {
    // In the metrics worker (labs/alignment/worker.rs) the module is loaded for its exported
    // function only: there is no page to mount.
    if web_sys::window().is_none() {
        return;
    }
    // A Rust panic would otherwise only reach the console as "unreachable executed":
    // log the message and show it in the page so a failure is never a silent freeze.
    std::panic::set_hook(Box::new(|info| {
        let msg = format!("prh playground crashed: {info}");
        web_sys::console::error_1(&msg.clone().into());
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let (Some(body), Ok(pre)) = (doc.body(), doc.create_element("pre")) {
            pre.set_id("panic");
            pre.set_class_name("error");
            pre.set_text_content(Some(&msg));
            let _ = body.prepend_with_node_1(&pre);
        }
    }));
    leptos::mount::mount_to_body(App);
}
