//! Each step's live figure, preset to that step's state: the graph editor, one card of the
//! spectral lab, the demo run's table, or a small alignment measurement. The numbers come
//! from the same functions as the labs (and as `question.rs`, which checks the answers).

use super::content::{Figure, Lang, SpectralCard, Step, Text};
use crate::figures::numbers;
use crate::labs::graph::{GraphEditor, Show};
use crate::labs::spectral::{self, Card, Settings};
use crate::widgets::lang::t;
use leptos::prelude::*;
use prh_core::Result;
use prh_core::linalg::Matrix;
use prh_core::measure::cka::linear_cka_features;
use prh_core::measure::knn::{knn_from_features, mutual_knn, mutual_knn_null};
use prh_core::measure::metrics::{self, MetricOptions};
use prh_core::rng::{Stream, generator, standard_normal};
use prh_core::theory::world::Preset;

/// The spectral lab's settings the lesson's cards use: the scenes world (12 states, two
/// nuisances per modality, seed 0), d = 4 after the trivial pair, a share `alpha` of bad
/// views in modality B's pairs.
pub fn lesson_settings(alpha: f64) -> Settings {
    Settings {
        preset: Preset::Scenes,
        n: 12,
        seed: 0,
        alpha,
        d: 4,
        skip_trivial: true,
    }
}

/// The demo run exported into the page (`prh-native demo`, web/make_demo.sh).
pub const DEMO_RESULTS: &str = include_str!("../../../assets/demo_results.json");

/// Samples, dimension and k of the measurement figure.
pub const MEASURE_N: usize = 200;
const MEASURE_D: usize = 8;
const MEASURE_K: usize = 10;

/// Mutual k-NN, its permutation null (mean, std over 20 shuffles) and linear CKA between
/// X and Y = X R + sigma E (X, E standard normal `[200, 8]`, R a random rotation; seed 0).
#[derive(Clone)]
pub struct Measured {
    /// Mutual 10-NN.
    pub mknn: f64,
    /// Null mean and std of mutual 10-NN.
    pub null: (f64, f64),
    /// Linear CKA.
    pub cka: f64,
}

/// The measurement figure's numbers at noise `sigma`.
///
/// # Shapes
/// X, Y `[MEASURE_N, 8]`
pub fn measure(sigma: f64) -> Result<Measured> {
    let mut rng = generator(0, Stream::Init, 77);
    let x = Matrix::from_fn(MEASURE_N, MEASURE_D, |_, _| standard_normal(&mut rng));
    let r = spectral::random_basis(0, 2, MEASURE_D)?;
    let mut noise = generator(0, Stream::Init, 78);
    let e = Matrix::from_fn(MEASURE_N, MEASURE_D, |_, _| standard_normal(&mut noise));
    let y = &x * &r + &e * faer::Scale(sigma);
    scores(&x, &y)
}

/// Mutual 10-NN, its null over 20 seeded shuffles, and linear CKA between paired rows.
///
/// # Shapes
/// `x [n, d]`, `y [n, e]`
fn scores(x: &Matrix, y: &Matrix) -> Result<Measured> {
    let (a, _) = knn_from_features(x.as_ref(), MEASURE_K, true)?;
    let (b, _) = knn_from_features(y.as_ref(), MEASURE_K, true)?;
    Ok(Measured {
        mknn: mutual_knn(&a, &b)?,
        null: mutual_knn_null(&a, &b, 20, 0)?,
        cka: linear_cka_features(x.as_ref(), y.as_ref())?,
    })
}

/// The shipped pair of real embeddings: English and German caption encoders trained apart
/// on Multi30k (the views-multilingual experiment), on the same 1,000 test images.
const REAL: [&str; 2] = ["assets/demo_multi_en.npy", "assets/demo_multi_de.npy"];

/// The real pair's scores (fetched and parsed in the page), with the CLI's defaults
/// (`prh_core::measure::metrics::measure`: row normalisation, k = 10, 100 shuffles for the
/// mutual k-NN null), so they equal `prh-native metrics EN DE --json`. The kernel metrics'
/// dense nulls are skipped (not shown here; seconds of work on the main thread).
async fn real_scores() -> std::result::Result<Measured, String> {
    let mut sets = Vec::new();
    for path in REAL {
        let bytes = crate::widgets::files::fetch_asset(path).await?;
        sets.push(crate::widgets::drop_zone::parse(path, &bytes)?);
    }
    let opts = MetricOptions {
        dense_null_bytes: 0,
        ..MetricOptions::default()
    };
    let r = metrics::measure(&sets[0], &sets[1], &opts).map_err(|e| e.to_string())?;
    Ok(Measured {
        mknn: r.scores.mutual_knn,
        null: (
            r.null_mutual_knn_mean.unwrap_or(f64::NAN),
            r.null_mutual_knn_std.unwrap_or(f64::NAN),
        ),
        cka: r.scores.cka,
    })
}

/// The real pair's table, computed when the step is shown; its words in `lang`.
#[component]
fn RealPair(lang: Signal<Lang>) -> impl IntoView {
    let result = RwSignal::new(None::<std::result::Result<Measured, String>>);
    leptos::task::spawn_local(async move {
        result.set(Some(real_scores().await));
    });
    view! {
        <div class="card">
            <h2>{t("Real embeddings: English vs German caption encoders, trained apart", "실제 임베딩: 따로 학습한 영어 캡션 인코더와 독일어 캡션 인코더").on(lang)}</h2>
            {move || match result.get() {
                None => view! { <p class="status">{t("loading the shipped embeddings…", "함께 제공된 임베딩을 불러오는 중…").on(lang)}</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error">{e}</p> }.into_any(),
                Some(Ok(m)) => view! {
                    <table class="metrics" id="lesson-real" data-cka=m.cka.to_string() data-mknn=m.mknn.to_string()
                        data-null-mean=m.null.0.to_string() data-null-std=m.null.1.to_string()>
                        <tr><td>{MKNN.on(lang)}</td><td>{numbers::fixed(m.mknn, 4)}</td></tr>
                        <tr><td>{t("null (100 shuffled pairings): mean ± std", "귀무 분포 (쌍을 100번 섞음): 평균 ± 표준편차").on(lang)}</td><td>{format!("{} ± {}", numbers::fixed(m.null.0, 4), numbers::fixed(m.null.1, 4))}</td></tr>
                        <tr><td>{t("z = (score − mean) / std", "z = (점수 − 평균) / 표준편차").on(lang)}</td><td>{numbers::fixed((m.mknn - m.null.0) / m.null.1, 1)}</td></tr>
                        <tr><td>{CKA.on(lang)}</td><td>{numbers::fixed(m.cka, 4)}</td></tr>
                    </table>
                }.into_any(),
            }}
            <p class="explain">{t(
                "1,000 Multi30k test images; each encoder saw only its own language's captions (good views: the captions of one image), and their 64-dimensional embeddings of the same images are compared with the defaults of prh-native metrics. Above the null (not chance), yet far from one space turned into the other (CKA 1): these small encoders, trained on two CPU cores, share only a little of their geometry. The alignment lab opens these files and any of yours.",
                "Multi30k 테스트 이미지 1,000장입니다. 각 인코더는 자기 언어의 캡션만 보았고 (좋은 뷰: 한 이미지의 캡션들), 같은 이미지들에 대한 두 인코더의 64차원 임베딩을 prh-native metrics의 기본 설정으로 비교합니다. 귀무 분포보다 높지만 (우연이 아님), 한 공간을 돌려 다른 공간을 얻는 경우(CKA 1)와는 거리가 멉니다. CPU 코어 두 개로 학습한 이 작은 인코더들은 기하 구조를 조금만 공유합니다. 정렬 실험실 탭에서 이 파일들과 여러분의 파일을 열 수 있습니다.",
            ).on(lang)}</p>
        </div>
    }
}

/// Row labels the two measurement tables (the slider's and the real pair's) share.
const MKNN: Text = t("mutual 10-NN", "상호 10-NN");
const CKA: Text = t("linear CKA", "선형 CKA");

/// The figure of `step`, its words (headings, labels, controls) in `lang`.
#[component]
pub fn StepFigure(step: &'static Step, lang: Signal<Lang>) -> impl IntoView {
    match step.figure {
        Figure::Graph {
            preset,
            n,
            pi,
            k,
            spectrum,
            cheeger,
            dk,
        } => {
            let show = Show {
                pi,
                k,
                spectrum,
                cheeger,
                dk,
            };
            view! { <GraphEditor prefix=step.key preset=preset n=n show=show lang=lang /> }
                .into_any()
        }
        Figure::Spectral { card, alpha } => {
            let card = match card {
                SpectralCard::Rotation => Card::Rotation,
                SpectralCard::Spectrum => Card::Spectrum,
            };
            view! { <spectral::PresetCard settings=lesson_settings(alpha) card=card lang=lang /> }
                .into_any()
        }
        Figure::Demo => view! { <DemoTable lang=lang /> }.into_any(),
        Figure::Measure => view! { <MeasureFigure lang=lang /><RealPair lang=lang /> }.into_any(),
    }
}

/// One row of the demo table: (observation, loss, kind, learned mutual 10-NN, its
/// permutation null (mean), the random initialisation's and the raw input's mutual 10-NN
/// (the run's `baselines` entries of the same views and observations), predicted, image
/// CKA to F, text CKA to F).
fn demo_rows() -> std::result::Result<Vec<[String; 10]>, String> {
    let v: serde_json::Value = serde_json::from_str(DEMO_RESULTS).map_err(|e| e.to_string())?;
    let list = |k: &str| {
        v[k].as_array()
            .ok_or(format!("demo_results.json: `{k}` is not a list"))
    };
    let (results, baselines) = (list("results")?, list("baselines")?);
    let num = |x: &serde_json::Value| x.as_f64().map_or("n/a".into(), |f| numbers::fixed(f, 3));
    Ok(results
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("?").to_string();
            // Exports from before the raw-input baseline have no `encoder`: random init.
            let baseline = |encoder: &str| {
                baselines
                    .iter()
                    .find(|b| {
                        b["kind"] == e["kind"]
                            && b["observation"] == e["observation"]
                            && b["encoder"].as_str().unwrap_or("random-init") == encoder
                    })
                    .map_or(serde_json::Value::Null, |b| {
                        b["learned"]["mutual_knn"].clone()
                    })
            };
            [
                s("observation"),
                s("loss"),
                s("kind"),
                num(&e["learned"]["mutual_knn"]),
                num(&e["learned"]["mutual_knn_null"][0]),
                num(&baseline("random-init")),
                num(&baseline("raw-input")),
                num(&e["predicted"]["mutual_knn"]),
                num(&e["image_vs_theory"]["cka"]),
                num(&e["text_vs_theory"]["cka"]),
            ]
        })
        .collect())
}

/// The demo run's learned-vs-predicted table (headings in `lang`; the cells are the run's
/// own names and numbers).
#[component]
fn DemoTable(lang: Signal<Lang>) -> impl IntoView {
    match demo_rows() {
        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
        Ok(rows) => view! {
            <div class="card">
                <h2>{t("prh-native demo: learned vs predicted (seed 0)", "prh-native demo: 학습 결과와 예측 (시드 0)").on(lang)}</h2>
                <table class="metrics" id="lesson-demo-table">
                    <tr><th>{t("observations", "관측").on(lang)}</th><th>{t("loss", "손실").on(lang)}</th><th>{t("views", "뷰").on(lang)}</th>
                        <th>{t("mutual 10-NN learned", "학습된 상호 10-NN").on(lang)}</th><th>{t("null (shuffled pairs)", "귀무 분포 (쌍을 섞음)").on(lang)}</th><th>{t("random init", "무작위 초기화").on(lang)}</th><th>{t("raw input (pixels / TF-IDF, one-hot)", "원시 입력 (픽셀 / TF-IDF, 원-핫)").on(lang)}</th>
                        <th>{t("predicted", "예측").on(lang)}</th><th>{t("image CKA to F", "이미지와 F의 CKA").on(lang)}</th><th>{t("text CKA to F", "텍스트와 F의 CKA").on(lang)}</th></tr>
                    {rows.into_iter().map(|r| view! {
                        <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr>
                    }).collect_view()}
                </table>
            </div>
        }
        .into_any(),
    }
}

/// X against a rotated, noisy copy: a noise slider and the three numbers, words in `lang`.
#[component]
fn MeasureFigure(lang: Signal<Lang>) -> impl IntoView {
    let sigma = RwSignal::new(0.0_f64);
    let result = Memo::new(move |_| {
        measure(sigma.get())
            .map(|m| (m.mknn, m.null, m.cka))
            .map_err(|e| e.to_string())
    });
    view! {
        <div class="card">
            <h2>{move || match lang.get() {
                Lang::En => format!("Y = X R + σ E, {MEASURE_N} samples, {MEASURE_D} dimensions, k = {MEASURE_K}"),
                Lang::Ko => format!("Y = X R + σ E, 표본 {MEASURE_N}개, {MEASURE_D}차원, k = {MEASURE_K}"),
            }}</h2>
            <label>{t("noise σ ", "잡음 σ ").on(lang)}
                <input type="range" id="lesson-sigma" min="0" max="2" step="0.1" prop:value=move || sigma.get().to_string()
                    on:input={move |ev| if let Ok(v) = event_target_value(&ev).parse::<f64>() { sigma.set(v) }} />
                <span id="lesson-sigma-value">{move || format!(" {:.1}", sigma.get())}</span>
            </label>
            {move || match result.get() {
                Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                Ok((mknn, (mean, std), cka)) => view! {
                    <table class="metrics" id="lesson-measure" data-cka=cka.to_string() data-mknn=mknn.to_string()>
                        <tr><td>{MKNN.on(lang)}</td><td>{numbers::fixed(mknn, 4)}</td></tr>
                        <tr><td>{t("null (shuffled pairs): mean ± std", "귀무 분포 (쌍을 섞음): 평균 ± 표준편차").on(lang)}</td><td>{format!("{} ± {}", numbers::fixed(mean, 4), numbers::fixed(std, 4))}</td></tr>
                        <tr><td>{CKA.on(lang)}</td><td>{numbers::fixed(cka, 4)}</td></tr>
                    </table>
                }.into_any(),
            }}
        </div>
    }
}
