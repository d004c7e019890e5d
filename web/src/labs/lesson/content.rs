//! The lesson's words, in English and Korean: one [`Step`] per idea, in the order that
//! builds the theorem. Data only; `mod.rs` lays it out, `figure.rs` draws each step's
//! live figure and `question.rs` computes each answer from the same code as the figure.
//!
//! Text conventions (rendered by `math.rs`): `$...$` inline LaTeX, `$$...$$` a displayed
//! formula, `` `...` `` code, a blank line between paragraphs. Every formula is parsed in a
//! test (`formulas_parse`), so a typo fails CI instead of showing an error in class.

use crate::widgets::lang::t;
pub use crate::widgets::lang::{Lang, Text};
use prh_core::theory::graph::GraphPreset;

/// The spectral-lab card a step shows (scenes world, 12 states, d = 4 after the trivial
/// pair — its eigenvalue 5/6 has multiplicity 4, so d = 4 is where the gap is — seed 0),
/// at a share `alpha` of bad views.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum SpectralCard {
    /// The two modalities' representations and the rotation between them.
    Rotation,
    /// K's spectrum with the top-d window and the gap.
    Spectrum,
}

/// A step's live figure.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Figure {
    /// The graph editor on a preset, with some of its panels.
    Graph {
        /// Preset the editor opens with.
        preset: GraphPreset,
        /// Its number of states.
        n: usize,
        /// Show Pi and p.
        pi: bool,
        /// Show K.
        k: bool,
        /// Show the spectrum.
        spectrum: bool,
        /// Show Cheeger's bounds.
        cheeger: bool,
        /// Show Davis–Kahan against the preset.
        dk: bool,
    },
    /// A spectral-lab card.
    Spectral {
        /// The card.
        card: SpectralCard,
        /// Share of bad views in modality B's pairs.
        alpha: f64,
    },
    /// The demo run's results (learned vs predicted).
    Demo,
    /// Mutual k-NN and CKA between X and a rotated, noisy copy, with the null.
    Measure,
}

/// What a step's question asks; `question.rs` computes the answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ask {
    /// Observations of one modality in the 12-state scenes world (states x nuisances).
    Observations,
    /// Pairs of the 6-cycle.
    CyclePairs,
    /// p_0 of the 4-state path.
    PathDegree,
    /// K_01 of the 4-state path.
    PathK01,
    /// lambda_2 of the 6-cycle.
    CycleLambda2,
    /// lambda_2 - lambda_3 of the two 10-state cliques.
    CliquesGap,
    /// The good-view rotation residual.
    GoodResidual,
    /// The bad-view spectral gap after the top 4.
    BadGap,
    /// sin Theta (op) between the two cliques' Fiedler directions before and after the
    /// bridge 1–8 gets weight 4.
    SinTheta,
    /// Which loss aligned the demo's symbol encoders more under good views.
    DemoWinner,
    /// Linear CKA of X and X rotated.
    RotatedCka,
}

/// One step of the lesson.
pub struct Step {
    /// The step's URL key (`step=...`).
    pub key: &'static str,
    /// Its title.
    pub title: Text,
    /// The explanation (paragraphs, formulas).
    pub body: Text,
    /// A "try this" prompt about the figure.
    pub try_this: Text,
    /// The question.
    pub question: Text,
    /// The figure.
    pub figure: Figure,
    /// What the question asks.
    pub ask: Ask,
}

/// The words of the page around the steps.
pub struct Chrome {
    /// "Step".
    pub step: Text,
    /// "Previous".
    pub prev: Text,
    /// "Next".
    pub next: Text,
    /// "Try this".
    pub try_this: Text,
    /// "Question".
    pub question: Text,
    /// "Check".
    pub check: Text,
    /// Right answer.
    pub right: Text,
    /// Wrong answer.
    pub wrong: Text,
    /// Not a number.
    pub not_number: Text,
    /// "Show the answer".
    pub reveal: Text,
    /// "Present".
    pub present: Text,
    /// "Handout".
    pub handout: Text,
    /// Keyboard help.
    pub keys: Text,
}

/// The page's own words.
pub const CHROME: Chrome = Chrome {
    step: t("Step", "단계"),
    prev: t("← Previous", "← 이전"),
    next: t("Next →", "다음 →"),
    try_this: t("Try this", "해 보기"),
    question: t("Question", "질문"),
    check: t("Check", "확인"),
    right: t("Right.", "맞았습니다."),
    wrong: t(
        "Not yet: look at the figure again.",
        "아직 아닙니다. 그림을 다시 보세요.",
    ),
    not_number: t(
        "Type a number (a decimal like 0.25 or a fraction like 1/4).",
        "숫자를 입력하세요 (0.25 같은 소수나 1/4 같은 분수).",
    ),
    reveal: t("Show the answer", "정답 보기"),
    present: t("Present (full screen)", "발표 모드 (전체 화면)"),
    handout: t("Handout (print / PDF)", "유인물 (인쇄 / PDF)"),
    keys: t(
        "Keys: → or Page Down next, ← or Page Up previous, Home / End first / last.",
        "키: → 또는 Page Down 다음, ← 또는 Page Up 이전, Home / End 처음 / 끝.",
    ),
};

/// The lesson, in order.
pub const STEPS: &[Step] = &[
    Step {
        key: "world",
        title: t(
            "A finite world and its observations",
            "유한한 세계와 그 관측",
        ),
        body: t(
            r"The theorem starts from a world with finitely many states $z \in \{1, \dots, n\}$, each drawn with probability $p(z)$. Nobody sees a state directly: each modality shows it through a nuisance $u$ it does not control — an image through its lighting, a caption through its wording — as an observation $x = g(z, u)$.

The figure is the `scenes` world that `prh-native demo` trains on: each dot is a state, a combination of shape, colour and size; a line joins two states that can be seen together.",
            r"정리는 유한한 개수의 상태 $z \in \{1, \dots, n\}$ 를 가진 세계에서 시작하며, 각 상태는 확률 $p(z)$ 로 뽑힙니다. 상태는 직접 보이지 않습니다. 각 모달리티는 자신이 통제하지 못하는 방해 요인 $u$ 를 거쳐 상태를 보여 줍니다. 이미지는 조명을 거쳐, 캡션은 표현 방식을 거쳐 관측 $x = g(z, u)$ 가 됩니다.

그림은 `prh-native demo` 가 학습하는 `scenes` 세계입니다. 점 하나가 상태 하나(모양, 색, 크기의 조합)이고, 선은 함께 보일 수 있는 두 상태를 잇습니다.",
        ),
        try_this: t(
            "Change the number of states: the world is every combination of its attributes.",
            "상태 수를 바꿔 보세요. 세계는 속성들의 모든 조합입니다.",
        ),
        question: t(
            "Each modality shows every state under 2 nuisances. With 12 states, how many different observations can one modality produce?",
            "각 모달리티는 모든 상태를 2가지 방해 요인 아래에서 보여 줍니다. 상태가 12개일 때 한 모달리티가 만들 수 있는 서로 다른 관측은 몇 개입니까?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::Scenes,
            n: 12,
            pi: false,
            k: false,
            spectrum: false,
            cheeger: false,
            dk: false,
        },
        ask: Ask::Observations,
    },
    Step {
        key: "pairs",
        title: t("Positive pairs form a graph", "양성 쌍은 그래프를 이룬다"),
        body: t(
            r"A JEPA learns from positive pairs $(x, x')$: two observations that should get similar representations. With good views both are observations of one state $z$, such as an image and its caption. Record which states are paired and how often, and you have a weighted graph on the states: the positive-pair graph.

This figure is an editor for that graph. Click empty space to add a state, click two states to join them with a pair; the weight field sets how often the new pair is drawn.",
            r"JEPA는 양성 쌍 $(x, x')$, 즉 비슷한 표현을 받아야 하는 두 관측에서 배웁니다. 좋은 뷰에서는 둘 다 같은 상태 $z$ 의 관측입니다(예: 이미지와 그 캡션). 어떤 상태들이 얼마나 자주 쌍을 이루는지 기록하면 상태 위의 가중 그래프, 즉 양성 쌍 그래프가 됩니다.

이 그림은 그 그래프의 편집기입니다. 빈 곳을 클릭하면 상태가 추가되고, 두 상태를 차례로 클릭하면 쌍으로 이어집니다. 가중치 칸은 새 쌍이 얼마나 자주 뽑히는지를 정합니다.",
        ),
        try_this: t(
            "Join state 0 to state 3 across the cycle, watch the pair count change, then erase the pair again.",
            "순환을 가로질러 상태 0과 상태 3을 이어 쌍의 수가 바뀌는 것을 보고, 다시 지워 보세요.",
        ),
        question: t(
            "How many positive pairs (edges) does the 6-cycle have?",
            "6-순환 그래프에는 양성 쌍(간선)이 몇 개 있습니까?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::Cycle,
            n: 6,
            pi: false,
            k: false,
            spectrum: false,
            cheeger: false,
            dk: false,
        },
        ask: Ask::CyclePairs,
    },
    Step {
        key: "degrees",
        title: t("Pi and the degrees", "Π 와 차수"),
        body: t(
            r"Divide the weights by their total and you get $\Pi$, the joint distribution of positive pairs: $\Pi_{ij} = A_{ij} / \sum_{kl} A_{kl}$. It is symmetric, because the pair $(x, x')$ is as likely as $(x', x)$. Its row sums are the degrees $$p_i = \sum_j \Pi_{ij},$$ how often state $i$ takes part in a pair at all.",
            r"가중치를 전체 합으로 나누면 양성 쌍의 결합 분포 $\Pi$ 가 됩니다: $\Pi_{ij} = A_{ij} / \sum_{kl} A_{kl}$. 쌍 $(x, x')$ 와 $(x', x)$ 는 같은 확률이므로 $\Pi$ 는 대칭입니다. 행의 합이 차수 $$p_i = \sum_j \Pi_{ij}$$ 이고, 상태 $i$ 가 쌍에 얼마나 자주 등장하는지를 나타냅니다.",
        ),
        try_this: t(
            "Set the weight of pair 0–1 to 3 with the form under the drawing: which degrees change?",
            "그림 아래 양식으로 쌍 0–1의 가중치를 3으로 바꿔 보세요. 어떤 차수가 바뀝니까?",
        ),
        question: t(
            r"For the path 0–1–2–3 with weight 1 on every pair, what is $p_0$?",
            r"모든 쌍의 가중치가 1인 경로 0–1–2–3에서 $p_0$ 는 얼마입니까?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::Path,
            n: 4,
            pi: true,
            k: false,
            spectrum: false,
            cheeger: false,
            dk: false,
        },
        ask: Ask::PathDegree,
    },
    Step {
        key: "kernel",
        title: t("Normalising: the kernel K", "정규화: 커널 K"),
        body: t(
            r"A popular state is in many pairs only because it is popular. Dividing each entry by the square roots of the two degrees removes that: $$K = D^{-1/2}\,\Pi\,D^{-1/2}, \qquad D = \operatorname{diag}(p).$$ $K$ is symmetric, its eigenvalues lie in $[-1, 1]$, and $\sqrt{p}$ is always an eigenvector with eigenvalue 1. For a function $f$ on states, $\mathbb{E}_{(z,z') \sim \Pi}[f(z) f(z')] = f^\top D^{1/2} K D^{1/2} f$: the agreement a JEPA maximises is a quadratic form in $K$.",
            r"인기 있는 상태는 단지 인기 때문에 많은 쌍에 들어갑니다. 각 항목을 두 차수의 제곱근으로 나누면 이 효과가 사라집니다: $$K = D^{-1/2}\,\Pi\,D^{-1/2}, \qquad D = \operatorname{diag}(p).$$ $K$ 는 대칭이고 고유값은 $[-1, 1]$ 안에 있으며, $\sqrt{p}$ 는 언제나 고유값 1의 고유벡터입니다. 상태 위의 함수 $f$ 에 대해 $\mathbb{E}_{(z,z') \sim \Pi}[f(z) f(z')] = f^\top D^{1/2} K D^{1/2} f$ 이므로, JEPA가 최대화하는 일치도는 $K$ 의 이차 형식입니다.",
        ),
        try_this: t(
            "Compare the heatmaps of Pi and K: which entries grew, which shrank?",
            "Π 와 K 의 히트맵을 비교해 보세요. 어떤 항목이 커지고 어떤 항목이 작아졌습니까?",
        ),
        question: t(
            r"For the same path, what is $K_{01}$?",
            r"같은 경로에서 $K_{01}$ 은 얼마입니까?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::Path,
            n: 4,
            pi: true,
            k: true,
            spectrum: false,
            cheeger: false,
            dk: false,
        },
        ask: Ask::PathK01,
    },
    Step {
        key: "spectrum",
        title: t("Spectrum and eigenvectors", "스펙트럼과 고유벡터"),
        body: t(
            r"Write $K = U \Lambda U^\top$ with $1 = \lambda_1 \ge \lambda_2 \ge \dots \ge \lambda_n \ge -1$. Each eigenvector maximises the Rayleigh quotient $$R(u) = \frac{u^\top K u}{u^\top u}$$ among the vectors orthogonal to the ones before it, so the top eigenvectors are the functions on states that positive pairs agree on most. Click a bar to colour the states by its eigenvector $D^{-1/2} u_j$; the card prints its Rayleigh quotient, equal to $\lambda_j$.",
            r"$K = U \Lambda U^\top$, $1 = \lambda_1 \ge \lambda_2 \ge \dots \ge \lambda_n \ge -1$ 로 씁시다. 각 고유벡터는 앞선 고유벡터들과 직교하는 벡터 가운데 레일리 몫 $$R(u) = \frac{u^\top K u}{u^\top u}$$ 을 최대화합니다. 그래서 위쪽 고유벡터들은 양성 쌍이 가장 잘 일치하는 상태 위의 함수입니다. 막대를 클릭하면 상태들이 고유벡터 $D^{-1/2} u_j$ 로 색칠되고, 카드에 그 레일리 몫($\lambda_j$ 와 같음)이 표시됩니다.",
        ),
        try_this: t(
            "Click the second bar: neighbours on the cycle get similar colours. Click the last bar: neighbours alternate.",
            "두 번째 막대를 클릭하면 순환의 이웃들이 비슷한 색을 띱니다. 마지막 막대를 클릭하면 이웃들의 색이 번갈아 바뀝니다.",
        ),
        question: t(
            r"What is the second eigenvalue $\lambda_2$ of K for the 6-cycle?",
            r"6-순환 그래프에서 K 의 두 번째 고유값 $\lambda_2$ 는 얼마입니까?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::Cycle,
            n: 6,
            pi: false,
            k: false,
            spectrum: true,
            cheeger: false,
            dk: false,
        },
        ask: Ask::CycleLambda2,
    },
    Step {
        key: "gap",
        title: t(
            "The gap makes the representation unique",
            "간격이 표현을 유일하게 만든다",
        ),
        body: t(
            r"A JEPA with a whitened second-order objective and $d$ dimensions learns $F = D^{-1/2} U_d$, the top $d$ eigenvectors after the trivial one, up to a rotation $Q$. That answer is unique exactly when the gap after them is positive; with a tie, any mix of the tied eigenvectors is as good. Cheeger's inequality ties $\lambda_2$ to the cheapest cut of the graph: $$\frac{1 - \lambda_2}{2} \le h(G) \le \sqrt{2\,(1 - \lambda_2)}.$$ Two cliques joined by one pair have an almost free cut, so $\lambda_2$ is close to 1 and the Fiedler vector (the colours) splits the cliques.",
            r"화이트닝된 2차 목적 함수와 $d$ 차원을 가진 JEPA는 회전 $Q$ 를 제외하고 $F = D^{-1/2} U_d$, 즉 자명한 고유벡터 다음의 상위 $d$ 개 고유벡터를 학습합니다. 그 뒤의 간격이 양수일 때에만 이 답이 유일합니다. 고유값이 같으면 같은 고유벡터들의 어떤 혼합도 똑같이 좋습니다. 치거 부등식은 $\lambda_2$ 를 그래프의 가장 값싼 절단과 연결합니다: $$\frac{1 - \lambda_2}{2} \le h(G) \le \sqrt{2\,(1 - \lambda_2)}.$$ 쌍 하나로 이어진 두 클리크는 거의 공짜인 절단을 가지므로 $\lambda_2$ 가 1에 가깝고, 피들러 벡터(색)가 두 클리크를 나눕니다.",
        ),
        try_this: t(
            "Switch on erase mode and click the bridge between the cliques: eigenvalue 1 repeats, the gap after the trivial pair becomes 0, and the page says what that means.",
            "지우기 모드를 켜고 두 클리크 사이의 다리를 클릭해 보세요. 고유값 1이 반복되고, 자명한 쌍 다음의 간격이 0이 되며, 페이지가 그 의미를 설명합니다.",
        ),
        question: t(
            r"With $d = 1$ after the trivial pair, what is the gap $\lambda_2 - \lambda_3$ for these two cliques?",
            r"자명한 쌍 다음 $d = 1$ 일 때, 이 두 클리크의 간격 $\lambda_2 - \lambda_3$ 는 얼마입니까?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::TwoCliques,
            n: 10,
            pi: false,
            k: false,
            spectrum: true,
            cheeger: true,
            dk: false,
        },
        ask: Ask::CliquesGap,
    },
    Step {
        key: "rotation",
        title: t("Two modalities, one rotation", "두 모달리티, 하나의 회전"),
        body: t(
            r"Now two modalities observe the same world: images with their lighting, captions with their wording. Under good views each modality's positive pairs are two observations of one state, so its kernel carries the state kernel's top eigenvectors, and each trained encoder lands on $F$ in a basis of its own: $$F_{\text{image}}\, Q = F_{\text{text}}, \qquad Q^\top Q = I.$$ The figure shows each modality in a random basis; press play to rotate one onto the other.",
            r"이제 두 모달리티가 같은 세계를 관측합니다. 이미지는 조명과 함께, 캡션은 표현 방식과 함께입니다. 좋은 뷰에서는 각 모달리티의 양성 쌍이 한 상태의 두 관측이므로, 그 커널은 상태 커널의 상위 고유벡터를 그대로 가지며, 학습된 각 인코더는 자기만의 기저에서 $F$ 에 도달합니다: $$F_{\text{image}}\, Q = F_{\text{text}}, \qquad Q^\top Q = I.$$ 그림은 각 모달리티를 임의의 기저로 보여 줍니다. 재생을 누르면 하나가 다른 하나 위로 회전합니다.",
        ),
        try_this: t(
            "Press play, then drag t back to 0 and forward again.",
            "재생을 누른 뒤 t 를 0으로 되돌렸다가 다시 앞으로 움직여 보세요.",
        ),
        question: t(
            r"Under good views, what residual $\lVert F_a Q - F_b \rVert$ does the best rotation leave?",
            r"좋은 뷰에서 가장 좋은 회전이 남기는 잔차 $\lVert F_a Q - F_b \rVert$ 는 얼마입니까?",
        ),
        figure: Figure::Spectral {
            card: SpectralCard::Rotation,
            alpha: 0.0,
        },
        ask: Ask::GoodResidual,
    },
    Step {
        key: "bad-views",
        title: t(
            "Bad views: the nuisance climbs into the top d",
            "나쁜 뷰: 방해 요인이 상위 d 로 올라온다",
        ),
        body: t(
            r"With bad views a positive pair is two spans of one text: they share the wording — the nuisance — not only the state. Then $\Pi$ rewards encoding the nuisance, and nuisance eigenvalues climb among the top $d$. Each modality's top eigenvectors now describe things the other modality cannot see, and no rotation maps one onto the other. The figure is modality B's spectrum with bad views only ($\alpha = 1$).",
            r"나쁜 뷰에서는 양성 쌍이 한 텍스트의 두 구간입니다. 두 구간은 상태뿐 아니라 표현 방식, 즉 방해 요인도 공유합니다. 그러면 $\Pi$ 는 방해 요인을 인코딩하는 것에 보상을 주고, 방해 요인의 고유값이 상위 $d$ 안으로 올라옵니다. 이제 각 모달리티의 상위 고유벡터는 다른 모달리티가 볼 수 없는 것을 묘사하며, 어떤 회전도 하나를 다른 하나로 옮기지 못합니다. 그림은 나쁜 뷰만 쓴($\alpha = 1$) 모달리티 B 의 스펙트럼입니다.",
        ),
        try_this: t(
            "Open the spectral lab (tab above) on the scenes world and slide from good views to bad views: watch the dark bars change.",
            "위의 스펙트럼 실험실 탭에서 scenes 세계를 열고 좋은 뷰에서 나쁜 뷰로 슬라이더를 움직여 보세요. 진한 막대가 바뀌는 것을 보세요.",
        ),
        question: t(
            r"Under bad views ($\alpha = 1$), what is the spectral gap after the top 4 (after the trivial pair)?",
            r"나쁜 뷰($\alpha = 1$)에서 (자명한 쌍 다음) 상위 4개 다음의 스펙트럼 간격은 얼마입니까?",
        ),
        figure: Figure::Spectral {
            card: SpectralCard::Spectrum,
            alpha: 1.0,
        },
        ask: Ask::BadGap,
    },
    Step {
        key: "davis-kahan",
        title: t(
            "Davis–Kahan: how far a changed kernel moves F",
            "데이비스–카한: 커널이 바뀌면 F 는 얼마나 움직이나",
        ),
        body: t(
            r"How far does the representation move when the kernel changes from $K$ to $K'$? The Davis–Kahan theorem bounds the angle between the two top-$d$ subspaces by the size of the change over the gap: $$\lVert \sin\Theta \rVert_{\mathrm{op}} \le \frac{\lVert (K' - K)\, U_d \rVert_{\mathrm{op}}}{\delta}.$$ A large gap makes the representation robust; a small one lets a small change of the positive pairs turn it away. Here $K$ is the two cliques as loaded and $K'$ the graph after your edits, compared on the Fiedler direction ($d = 1$ after the trivial pair).",
            r"커널이 $K$ 에서 $K'$ 로 바뀌면 표현은 얼마나 움직일까요? 데이비스–카한 정리는 두 상위 $d$ 부분공간 사이의 각을 변화의 크기를 간격으로 나눈 값으로 제한합니다: $$\lVert \sin\Theta \rVert_{\mathrm{op}} \le \frac{\lVert (K' - K)\, U_d \rVert_{\mathrm{op}}}{\delta}.$$ 간격이 크면 표현이 견고하고, 작으면 양성 쌍의 작은 변화에도 표현이 돌아갑니다. 여기서 $K$ 는 처음 불러온 두 클리크이고 $K'$ 는 편집한 뒤의 그래프이며, 피들러 방향($d = 1$, 자명한 쌍 다음)에서 비교합니다.",
        ),
        try_this: t(
            "Change the weight of one pair inside a clique, then of the bridge: which edit moves the Fiedler direction more, and does the bound follow?",
            "클리크 안의 쌍 하나의 가중치를 바꾼 다음 다리의 가중치를 바꿔 보세요. 어느 편집이 피들러 방향을 더 많이 움직이고, 한계도 따라갑니까?",
        ),
        question: t(
            r"With the form under the drawing, set the weight of the bridge, pair 1–8, to 4. What is the measured $\lVert \sin\Theta \rVert_{\mathrm{op}}$ now (4 decimals)?",
            r"그림 아래 양식으로 다리(쌍 1–8)의 가중치를 4로 바꾸세요. 이제 측정된 $\lVert \sin\Theta \rVert_{\mathrm{op}}$ 는 얼마입니까 (소수점 4자리)?",
        ),
        figure: Figure::Graph {
            preset: GraphPreset::TwoCliques,
            n: 10,
            pi: false,
            k: false,
            spectrum: true,
            cheeger: false,
            dk: true,
        },
        ask: Ask::SinTheta,
    },
    Step {
        key: "learned",
        title: t(
            "Learned encoders and the prediction",
            "학습된 인코더와 예측",
        ),
        body: t(
            r"The theorem is about optima; trained networks have to get there. `prh-native demo` trains an image JEPA and a caption JEPA separately on the scenes world — with the spectral loss (whitened, the objective the theorem is proven for) and with SIGReg (the paper's loss) — and compares them with the prediction: the mutual 10-nearest-neighbour agreement of the two encoders, and each encoder's CKA to $F$. The table is one run of it, exported into this page.",
            r"정리는 최적해에 관한 것이고, 학습된 신경망은 그곳에 도달해야 합니다. `prh-native demo` 는 scenes 세계에서 이미지 JEPA와 캡션 JEPA를 따로 학습시킵니다. 스펙트럼 손실(화이트닝된, 정리가 증명된 목적 함수)과 SIGReg(논문의 손실) 두 가지로 학습한 뒤 예측과 비교합니다. 두 인코더의 상호 10-최근접 이웃 일치도와 각 인코더의 $F$ 에 대한 CKA 입니다. 표는 그 실행 결과를 이 페이지로 내보낸 것입니다.",
        ),
        try_this: t(
            "Open the Train live tab: the two symbol encoders of this table train in your browser, and you watch their CKA to F climb. Or run `prh-native demo` (about two minutes) and compare your table with this one.",
            "'Train live' 탭을 열면 이 표의 두 기호 인코더가 브라우저에서 학습되며 F 에 대한 CKA 가 오르는 것을 볼 수 있습니다. 또는 `prh-native demo` 를 실행해 (약 2분) 이 표와 비교해 보세요.",
        ),
        question: t(
            "Under good views with symbol observations, which loss brought the two encoders closer together (higher mutual 10-NN)?",
            "기호 관측과 좋은 뷰에서 어느 손실이 두 인코더를 더 가깝게 만들었습니까 (상호 10-NN 이 더 높음)?",
        ),
        figure: Figure::Demo,
        ask: Ask::DemoWinner,
    },
    Step {
        key: "measure",
        title: t(
            "Measuring alignment on real embeddings",
            "실제 임베딩에서 정렬 측정하기",
        ),
        body: t(
            r"Real models come with no $F$ to compare against: we compare two encoders with each other on paired inputs. Mutual $k$-NN asks how many of each sample's $k$ nearest neighbours are the same in both spaces; linear CKA compares the two Gram matrices, $$\mathrm{CKA}(X, Y) = \frac{\lVert Y^\top X \rVert_F^2}{\lVert X^\top X \rVert_F \, \lVert Y^\top Y \rVert_F}$$ on centred features. Shuffling the pairing gives the null: what unrelated embeddings score. In the first figure $Y = XR + \sigma E$ for a random rotation $R$ and noise $E$; the second measures two real encoders, English and German, trained apart on Multi30k captions of the same images.",
            r"실제 모델에는 비교할 $F$ 가 없습니다. 대신 짝지어진 입력에서 두 인코더를 서로 비교합니다. 상호 $k$-NN 은 각 샘플의 $k$ 개 최근접 이웃 중 몇 개가 두 공간에서 같은지를 묻고, 선형 CKA 는 중심화된 특징에서 두 그람 행렬을 비교합니다: $$\mathrm{CKA}(X, Y) = \frac{\lVert Y^\top X \rVert_F^2}{\lVert X^\top X \rVert_F \, \lVert Y^\top Y \rVert_F}.$$ 짝을 섞으면 귀무 분포, 즉 관계없는 임베딩이 받는 점수를 얻습니다. 첫 번째 그림에서 $Y = XR + \sigma E$ 이고 $R$ 은 임의의 회전, $E$ 는 잡음입니다. 두 번째 그림은 같은 이미지들의 Multi30k 캡션으로 따로 학습된 두 실제 인코더(영어와 독일어)를 측정합니다.",
        ),
        try_this: t(
            "Raise the noise σ and watch both scores fall towards the null; the alignment lab (tab above) does the same for your own .npy files.",
            "잡음 σ 를 키우면 두 점수가 귀무 수준으로 떨어지는 것을 보세요. 위의 정렬 실험실 탭은 자신의 .npy 파일로 같은 일을 합니다.",
        ),
        question: t(
            r"With noise $\sigma = 0$, $Y$ is $X$ rotated. What is linear CKA?",
            r"잡음 $\sigma = 0$ 이면 $Y$ 는 $X$ 를 회전한 것입니다. 선형 CKA 는 얼마입니까?",
        ),
        figure: Figure::Measure,
        ask: Ask::RotatedCka,
    },
];

/// The index of the step with URL key `key`.
pub fn index_of(key: &str) -> Option<usize> {
    STEPS.iter().position(|s| s.key == key)
}
