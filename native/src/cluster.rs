//! Multi-node training (docs/scaling.md, "Several processes or machines"): `prh-native
//! train --nodes N --node-rank R --coordinator HOST:PORT` runs this process as node `R` of
//! `N`, in the style of `torchrun` (also `PRH_NODES`, `PRH_NODE_RANK`, `PRH_COORDINATOR`).
//!
//! Two planes, each on its own port:
//! - **Tensors**: burn's collective engine (`burn-collective`, patched: vendor/README.md)
//!   all-reduces each step's statistics and gradients between the nodes
//!   ([`prh_core::train::data_parallel::Nodes`]); node 0 runs its orchestrator on
//!   `PORT + 1`, every node serves its tensors on its own port (`PORT + 2 + R` unless
//!   `--node-address` says otherwise).
//! - **Membership** (this module, on `PORT`, hosted by node 0): each node joins with its
//!   rank, the node count, a hash of its resolved config, a hash of its own executable
//!   and the step it starts from; a node that disagrees with node 0 is refused at join,
//!   naming what differs. Training starts when all `N` have joined (or every node stops
//!   after `--join-timeout` seconds, naming the ranks that never came). Then every node
//!   sends a heartbeat each second; a node whose connection closes (a crash, `kill -9`:
//!   the kernel closes its socket) or that is silent for [`SILENT_AFTER`] is announced to
//!   the others, which stop at once with an error naming it. Their last checkpoint (node
//!   0's, written atomically) is where `--resume` continues, with the same or another
//!   node count. The engine itself has no such checks: without them a dead node leaves
//!   the others waiting in an all-reduce for ever.

use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::Backend;
use prh_core::backend::burn::tensor::{Tensor, TensorPrimitive};
use prh_core::train::data_parallel::{Nodes, Shard};
use serde::{Deserialize, Serialize};
use std::hash::Hasher;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A node silent for this long (no heartbeat) is taken as lost.
pub const SILENT_AFTER: Duration = Duration::from_secs(10);
/// Heartbeat period.
const BEAT: Duration = Duration::from_secs(1);
/// Exit status of a node stopped because another node was lost.
const LOST_EXIT: i32 = 3;

/// Where this process sits in a multi-node run.
#[derive(clap::Args, Debug, Clone)]
pub struct NodeArgs {
    /// Processes (nodes) training together; 1 = this process alone.
    #[arg(long, env = "PRH_NODES", default_value_t = 1)]
    pub nodes: usize,
    /// This process's rank, 0..nodes. Node 0 hosts the coordinator and writes the run
    /// folder (which the others read: put --out on a file system every node sees).
    #[arg(long, env = "PRH_NODE_RANK", default_value_t = 0)]
    pub node_rank: usize,
    /// Node 0's HOST:PORT: membership on PORT, burn's orchestrator on PORT + 1.
    #[arg(long, env = "PRH_COORDINATOR", default_value = "127.0.0.1:29500")]
    pub coordinator: String,
    /// This node's HOST:PORT for tensor transfers (default: the address this machine
    /// reaches the coordinator from, port PORT + 2 + rank).
    #[arg(long, env = "PRH_NODE_ADDRESS")]
    pub node_address: Option<String>,
    /// Seconds every node waits for all the others to join.
    #[arg(long, default_value_t = 120)]
    pub join_timeout: u64,
}

impl NodeArgs {
    /// Whether this is a multi-node run.
    pub fn multi(&self) -> bool {
        self.nodes > 1
    }

    /// Checks the flags: a rank below the node count, a `HOST:PORT` coordinator.
    pub fn check(&self) -> Result<(String, u16)> {
        if self.nodes == 0 {
            bail!("--nodes 0: expected at least 1 (the number of processes training together)");
        }
        if self.node_rank >= self.nodes {
            bail!(
                "--node-rank {}: expected a rank in 0..{} (--nodes {})",
                self.node_rank,
                self.nodes,
                self.nodes
            );
        }
        let (host, port) = split_host_port(&self.coordinator, "--coordinator")?;
        if port > u16::MAX - 2 - self.nodes as u16 {
            bail!(
                "--coordinator {}: port too high (ports PORT..PORT+2+nodes are used)",
                self.coordinator
            );
        }
        Ok((host, port))
    }
}

/// `HOST:PORT` -> (host, port), errors naming `flag`.
fn split_host_port(s: &str, flag: &str) -> Result<(String, u16)> {
    let Some((host, port)) = s.rsplit_once(':') else {
        bail!("{flag} {s}: expected HOST:PORT");
    };
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .with_context(|| format!("{flag} {s}: expected HOST:PORT with a port in 1..65535"))?;
    if host.is_empty() {
        bail!("{flag} {s}: expected HOST:PORT");
    }
    Ok((
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
    ))
}

fn resolve(host: &str, port: u16, flag: &str) -> Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()
        .with_context(|| format!("{flag}: cannot resolve {host}"))?
        .next()
        .with_context(|| format!("{flag}: {host} has no address"))
}

/// What a node says when it joins.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Hello {
    rank: usize,
    nodes: usize,
    /// The resolved config (TOML) this node trains.
    config: String,
    /// Package version and a hash of the executable's bytes.
    code: String,
    /// The step the node starts from (its checkpoint's, else 0).
    start_step: usize,
    host: String,
    pid: u32,
}

impl Hello {
    fn who(&self) -> String {
        format!("node {} ({}, pid {})", self.rank, self.host, self.pid)
    }
}

/// What the coordinator says.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Notice {
    /// Every node has joined: train.
    Start,
    /// This node is refused, or the run cannot start.
    Error(String),
    /// A node left the run: stop.
    Lost {
        rank: usize,
        who: String,
        why: String,
    },
    /// Heartbeat.
    Ping,
}

fn send<T: Serialize>(stream: &mut TcpStream, msg: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_string(msg).unwrap_or_default();
    line.push('\n');
    stream.write_all(line.as_bytes())
}

/// 16 hex digits of a hash of `bytes`.
fn digest(bytes: &[u8]) -> String {
    let mut h = std::hash::DefaultHasher::new();
    h.write(bytes);
    format!("{:016x}", h.finish())
}

/// The package version and a hash of this executable's bytes: two builds of different
/// code never join one run.
fn code_version() -> Result<String> {
    let exe = std::env::current_exe().context("locating this executable")?;
    let bytes = std::fs::read(&exe).with_context(|| format!("reading {}", exe.display()))?;
    Ok(format!("{} {}", env!("CARGO_PKG_VERSION"), digest(&bytes)))
}

/// The fields where config `a` differs from node 0's `lead` (`field: a vs lead`, at most
/// three), both being resolved TOML.
fn config_difference(a: &str, lead: &str) -> String {
    fn flatten(prefix: &str, v: &toml::Value, out: &mut Vec<(String, String)>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    flatten(&key, v, out);
                }
            }
            other => out.push((prefix.to_string(), other.to_string())),
        }
    }
    let parse = |s: &str| {
        let mut out = Vec::new();
        if let Ok(t) = toml::from_str::<toml::Table>(s) {
            flatten("", &toml::Value::Table(t), &mut out);
        }
        out
    };
    let (a, lead) = (parse(a), parse(lead));
    let get = |v: &[(String, String)], k: &str| {
        v.iter()
            .find(|(x, _)| x == k)
            .map_or_else(|| "(unset)".to_string(), |(_, v)| v.clone())
    };
    let mut keys: Vec<&String> = a.iter().chain(&lead).map(|(k, _)| k).collect();
    keys.sort();
    keys.dedup();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter(|k| get(&a, k) != get(&lead, k))
        .map(|k| format!("{k} = {} here, {} on node 0", get(&a, k), get(&lead, k)))
        .collect();
    if diffs.is_empty() {
        return "the resolved configs differ".into();
    }
    let more = diffs.len().saturating_sub(3);
    let mut text = diffs.into_iter().take(3).collect::<Vec<_>>().join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// One joined node, on the coordinator's side.
struct Member {
    hello: Hello,
    stream: TcpStream,
    done: bool,
}

/// Node 0's membership service: join checks, then liveness (module docs).
struct Coordinator {
    members: Mutex<Vec<Member>>,
    lost: AtomicBool,
    /// Why each refused rank was refused (for the join timeout's message).
    refused: Mutex<Vec<(usize, String)>>,
}

impl Coordinator {
    /// Why `h` may not join a run whose node 0 said `lead` (None: it may).
    fn refuse(h: &Hello, lead: &Hello) -> Option<String> {
        if h.nodes != lead.nodes {
            return Some(format!(
                "{} was started with --nodes {}, node 0 with --nodes {}",
                h.who(),
                h.nodes,
                lead.nodes
            ));
        }
        if h.code != lead.code {
            return Some(format!(
                "{} runs other code than node 0 (version and executable hash {} vs {}): \
                 every node must run the same build of prh-native",
                h.who(),
                h.code,
                lead.code
            ));
        }
        if h.config != lead.config {
            return Some(format!(
                "{} trains another config than node 0 ({}): every node must be given the \
                 same config and --set overrides",
                h.who(),
                config_difference(&h.config, &lead.config)
            ));
        }
        if h.start_step != lead.start_step {
            return Some(format!(
                "{} starts from step {}, node 0 from step {}: every node must resume from \
                 the same checkpoint (node 0's run folder)",
                h.who(),
                h.start_step,
                lead.start_step
            ));
        }
        None
    }

    /// Accepts nodes until all `nodes` have joined or `deadline`; answers each with
    /// `Start` or `Error`. Returns whether the run starts.
    fn gather(&self, listener: &TcpListener, nodes: usize, deadline: Instant) -> bool {
        let _ = listener.set_nonblocking(true);
        let mut waiting: Vec<(Hello, TcpStream)> = Vec::new();
        loop {
            accept_hello(listener, &mut waiting);
            // Judge waiting nodes against node 0 once it is here.
            let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
            if members.is_empty()
                && let Some(at) = waiting.iter().position(|(h, _)| h.rank == 0)
            {
                let (hello, stream) = waiting.swap_remove(at);
                members.push(Member {
                    hello,
                    stream,
                    done: false,
                });
            }
            self.admit(&mut members, &mut waiting);
            if members.len() == nodes {
                members.sort_by_key(|m| m.hello.rank);
                for m in members.iter_mut() {
                    let _ = send(&mut m.stream, &Notice::Start);
                }
                return true;
            }
            if Instant::now() >= deadline {
                self.never_joined(&mut members, nodes);
                return false;
            }
        }
    }

    /// Judges every waiting node against node 0's hello (once node 0 is a member): admits
    /// it, or refuses it with the reason (rank out of range or taken, another config or
    /// start step), recorded for the timeout message.
    fn admit(&self, members: &mut Vec<Member>, waiting: &mut Vec<(Hello, TcpStream)>) {
        if let Some(lead) = members.first().map(|m| m.hello.clone()) {
            for (h, mut stream) in waiting.drain(..) {
                let why = if h.rank >= lead.nodes {
                    Some(format!("{}: rank out of range 0..{}", h.who(), lead.nodes))
                } else if members.iter().any(|m| m.hello.rank == h.rank) {
                    Some(format!("{}: rank {} has already joined", h.who(), h.rank))
                } else {
                    Self::refuse(&h, &lead)
                };
                match why {
                    Some(why) => {
                        eprintln!("coordinator: refused {why}");
                        if let Ok(mut r) = self.refused.lock() {
                            r.push((h.rank, why.clone()));
                        }
                        let _ = send(
                            &mut stream,
                            &Notice::Error(format!("refused at join: {why}")),
                        );
                    }
                    None => members.push(Member {
                        hello: h,
                        stream,
                        done: false,
                    }),
                }
            }
        }
    }

    /// Tells every member that the run will not start: which ranks never joined, and
    /// who was refused and why.
    fn never_joined(&self, members: &mut [Member], nodes: usize) {
        let missing: Vec<String> = (0..nodes)
            .filter(|r| !members.iter().any(|m| m.hello.rank == *r))
            .map(|r| r.to_string())
            .collect();
        let mut why = format!(
            "node(s) {} never joined the run within the join timeout",
            missing.join(", ")
        );
        if let Ok(r) = self.refused.lock() {
            for (_, reason) in r.iter() {
                why.push_str(&format!("; refused: {reason}"));
            }
        }
        for m in members.iter_mut() {
            let _ = send(&mut m.stream, &Notice::Error(why.clone()));
        }
    }

    /// Announces that `rank` left (once: the first loss stops the run).
    fn announce_lost(&self, rank: usize, why: &str) {
        if self.lost.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        let who = members
            .iter()
            .find(|m| m.hello.rank == rank)
            .map_or_else(|| format!("node {rank}"), |m| m.hello.who());
        for m in members
            .iter_mut()
            .filter(|m| m.hello.rank != rank && !m.done)
        {
            let _ = send(
                &mut m.stream,
                &Notice::Lost {
                    rank,
                    who: who.clone(),
                    why: why.to_string(),
                },
            );
        }
    }

    /// Watches node `rank`'s connection until it says `bye` or is lost.
    fn watch(self: &Arc<Self>, rank: usize, stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(SILENT_AFTER));
        let mut lines = BufReader::new(stream);
        loop {
            let mut line = String::new();
            let why = match lines.read_line(&mut line) {
                Ok(0) => "its connection closed (the process ended)".to_string(),
                Ok(_) if line.trim() == "bye" => {
                    let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(m) = members.iter_mut().find(|m| m.hello.rank == rank) {
                        m.done = true;
                    }
                    return;
                }
                Ok(_) => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    format!("no heartbeat for {} s", SILENT_AFTER.as_secs())
                }
                Err(e) => format!("its connection failed ({e})"),
            };
            self.announce_lost(rank, &why);
            return;
        }
    }

    /// Whether every node has said `bye`.
    fn all_done(&self) -> bool {
        let members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        members.iter().all(|m| m.done)
    }
}

/// This process's membership of a multi-node run: the heartbeat, the watch for lost
/// nodes, and the tensor engine's registration ([`Nodes`] for the training loop).
pub struct Cluster {
    rank: usize,
    nodes: usize,
    stream: Mutex<TcpStream>,
    finished: Arc<AtomicBool>,
    coordinator: Option<Arc<Coordinator>>,
}

impl Cluster {
    /// Joins the run as `args` say, training `config_toml` from `start_step`: node 0
    /// first starts the coordinator and burn's orchestrator. Returns once every node has
    /// joined, with the tensor engine registered on `device` (backend `B`: the training
    /// backend's inner one). Errors: a refused join (naming what differs), a node that
    /// never joined, an unreachable coordinator, ports in use.
    pub fn join<B: Backend>(
        args: &NodeArgs,
        config_toml: &str,
        start_step: usize,
        device: &B::Device,
    ) -> Result<Cluster> {
        let (host, port) = args.check()?;
        quiet_engine_log();
        quiet_engine_panics();
        let timeout = Duration::from_secs(args.join_timeout.max(1));
        let deadline = Instant::now() + timeout;
        let coord_addr = resolve(&host, port, "--coordinator")?;
        let coordinator = if args.node_rank == 0 {
            Some(start_coordinator(port, args.nodes, deadline)?)
        } else {
            None
        };
        let hello = Hello {
            rank: args.node_rank,
            nodes: args.nodes,
            config: config_toml.to_string(),
            code: code_version()?,
            start_step,
            host: hostname(),
            pid: std::process::id(),
        };
        let mut stream = connect_until(coord_addr, deadline, &args.coordinator)?;
        send(&mut stream, &hello).context("sending this node's hello to the coordinator")?;
        stream.set_read_timeout(Some(timeout + Duration::from_secs(5)))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut line = String::new();
        reader.read_line(&mut line).with_context(|| {
            format!(
                "waiting for the other nodes at {} (--join-timeout {} s)",
                args.coordinator, args.join_timeout
            )
        })?;
        match serde_json::from_str::<Notice>(line.trim()) {
            Ok(Notice::Start) => {}
            Ok(Notice::Error(why)) => bail!("coordinator {}: {why}", args.coordinator),
            _ => bail!(
                "coordinator {}: no answer to this node's join (did it stop?)",
                args.coordinator
            ),
        }
        let finished = Arc::new(AtomicBool::new(false));
        spawn_monitor(
            reader,
            args.node_rank,
            args.coordinator.clone(),
            finished.clone(),
        );
        spawn_heartbeat(stream.try_clone()?, finished.clone());
        let cluster = Cluster {
            rank: args.node_rank,
            nodes: args.nodes,
            stream: Mutex::new(stream),
            finished,
            coordinator,
        };
        cluster.register::<B>(args, &host, port, coord_addr, device)?;
        Ok(cluster)
    }

    /// Registers this node with burn's collective engine: one peer per node (the node's
    /// own replicas are summed before, by the training loop), ring all-reduce between
    /// nodes.
    fn register<B: Backend>(
        &self,
        args: &NodeArgs,
        host: &str,
        port: u16,
        coord_addr: SocketAddr,
        device: &B::Device,
    ) -> Result<()> {
        use burn_collective::{AllReduceStrategy, CollectiveConfig, PeerId};
        use burn_communication::Address;
        let (node_host, node_port) = match &args.node_address {
            Some(a) => split_host_port(a, "--node-address")?,
            None => (local_ip_towards(coord_addr), port + 2 + self.rank as u16),
        };
        let address = |h: &str, p: u16| {
            let url = format!("ws://{h}:{p}");
            url.parse::<Address>()
                .map_err(|e| anyhow::anyhow!("{url}: not a usable address ({e:?})"))
        };
        let config = CollectiveConfig::default()
            .with_num_devices(1)
            .with_num_nodes(self.nodes as u32)
            .with_global_address(address(host, port + 1)?)
            .with_node_address(address(&node_host, node_port)?)
            .with_data_service_port(node_port)
            .with_global_all_reduce_strategy(AllReduceStrategy::Ring);
        burn_collective::register::<B>(PeerId::from(0u32), device.clone(), config).map_err(|e| {
            anyhow::anyhow!(
                "node {}: joining burn's collective engine: {e:?}",
                self.rank
            )
        })
    }

    /// Leaves the run after its last step: this node says `bye`; node 0 then waits (up
    /// to [`SILENT_AFTER`]) until every node has, so that the engine it hosts outlives
    /// their last all-reduce.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
        {
            let mut s = self.stream.lock().unwrap_or_else(|p| p.into_inner());
            let _ = s.write_all(b"bye\n");
        }
        if let Some(c) = &self.coordinator {
            let until = Instant::now() + SILENT_AFTER;
            while !c.all_done() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

impl<B: Backend> Nodes<B> for Cluster {
    fn node(&self) -> Shard {
        Shard {
            index: self.rank,
            count: self.nodes,
        }
    }

    fn all_reduce_sum(&self, x: Tensor<B, 1>) -> prh_core::Result<Tensor<B, 1>> {
        use burn_collective::{PeerId, ReduceOperation};
        let sum = burn_collective::all_reduce::<B>(
            PeerId::from(0u32),
            x.into_primitive().tensor(),
            ReduceOperation::Sum,
        )
        .map_err(|e| {
            // A lost node usually breaks the engine before the coordinator's notice
            // arrives (here: `LocalServerMissing` once its connection reset): give the
            // monitor time to stop this process naming the node, and only then report
            // the engine's own error.
            let until = Instant::now() + SILENT_AFTER + Duration::from_secs(2);
            while Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            prh_core::Error::invalid(format!(
                "node {}: the all-reduce between nodes failed ({e:?}) and the coordinator \
                 reported no lost node",
                self.rank
            ))
        })?;
        Ok(Tensor::from_primitive(TensorPrimitive::Float(sum)))
    }
}

/// burn's websocket server installs an INFO-level log subscriber unless one exists:
/// install one first that prints the engine's messages only at the level
/// `PRH_ENGINE_LOG` names (`error`, `warn`, `info`, `debug`), none by default. A peer
/// that exits logs a connection reset at ERROR level on the others; the failures that
/// matter reach the user through this module's own errors.
fn quiet_engine_log() {
    let level = std::env::var("PRH_ENGINE_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing_subscriber::filter::LevelFilter>().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::OFF);
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .try_init();
}

/// When a peer dies, burn's data service panics on the reset connection in one of the
/// engine's tokio worker threads (the panic stays in that thread). The cause reaches the
/// user as this module's "left the run" error; the panic's message and backtrace are only
/// printed with `PRH_ENGINE_LOG` set. Panics anywhere else print as before.
fn quiet_engine_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let engine = std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("tokio-rt-worker"));
        if !engine || std::env::var_os("PRH_ENGINE_LOG").is_some() {
            default(info);
        }
    }));
}

/// Node 0: the membership service on `port` (a thread) and burn's orchestrator on
/// `port + 1` (a tokio runtime on another thread). Errors name a port already in use.
fn start_coordinator(port: u16, nodes: usize, deadline: Instant) -> Result<Arc<Coordinator>> {
    let listener = TcpListener::bind(("0.0.0.0", port)).with_context(|| {
        format!(
            "coordinator: cannot listen on port {port} (in use? choose another --coordinator port)"
        )
    })?;
    // burn's orchestrator logs a bind failure and returns; check the port here so the
    // error reaches the user.
    drop(TcpListener::bind(("0.0.0.0", port + 1)).with_context(|| {
        format!(
            "coordinator: cannot listen on port {} (PORT + 1, burn's orchestrator)",
            port + 1
        )
    })?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the orchestrator's runtime")?;
    std::thread::spawn(move || {
        runtime.block_on(burn_collective::start_global_orchestrator(port + 1))
    });
    let coordinator = Arc::new(Coordinator {
        members: Mutex::new(Vec::new()),
        lost: AtomicBool::new(false),
        refused: Mutex::new(Vec::new()),
    });
    let c = coordinator.clone();
    std::thread::spawn(move || {
        if !c.gather(&listener, nodes, deadline) {
            return;
        }
        let streams: Vec<(usize, TcpStream)> = {
            let members = c.members.lock().unwrap_or_else(|p| p.into_inner());
            members
                .iter()
                .filter_map(|m| m.stream.try_clone().ok().map(|s| (m.hello.rank, s)))
                .collect()
        };
        let mut beats = Vec::new();
        for (rank, stream) in streams {
            if let Ok(s) = stream.try_clone() {
                beats.push(s);
            }
            let c = c.clone();
            std::thread::spawn(move || c.watch(rank, stream));
        }
        // Heartbeats to every node, so a node notices a coordinator that went silent.
        loop {
            for s in &mut beats {
                let _ = send(s, &Notice::Ping);
            }
            std::thread::sleep(BEAT);
        }
    });
    Ok(coordinator)
}

/// Connects to the coordinator, retrying until `deadline` (node 0 may start later).
fn connect_until(addr: SocketAddr, deadline: Instant, shown: &str) -> Result<TcpStream> {
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                bail!(
                    "coordinator {shown}: not reachable before the join timeout ({e}); is node 0 running?"
                )
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Reads the coordinator's notices; stops this process when a node is lost or the
/// coordinator goes away before this node has finished.
fn spawn_monitor(
    mut reader: BufReader<TcpStream>,
    rank: usize,
    coordinator: String,
    finished: Arc<AtomicBool>,
) {
    let _ = reader.get_ref().set_read_timeout(Some(SILENT_AFTER));
    std::thread::spawn(move || {
        loop {
            let mut line = String::new();
            let read = reader.read_line(&mut line);
            if finished.load(Ordering::SeqCst) {
                return;
            }
            let why = match (read, serde_json::from_str::<Notice>(line.trim())) {
                (Ok(_), Ok(Notice::Ping)) => continue,
                (Ok(_), Ok(Notice::Lost { who, why, .. })) => format!("{who} left the run: {why}"),
                (Ok(0), _) => {
                    format!("lost the coordinator at {coordinator} (node 0's process ended)")
                }
                (Ok(_), _) => continue,
                (Err(e), _) => format!("lost the coordinator at {coordinator} ({e})"),
            };
            eprintln!(
                "error: node {rank}: {why}; stopping. Node 0's last checkpoint is in the run \
                 folder: continue with `prh-native train --resume DIR` (any --nodes)"
            );
            std::process::exit(LOST_EXIT);
        }
    });
}

/// Sends `ping` every [`BEAT`] until this node has finished.
fn spawn_heartbeat(mut stream: TcpStream, finished: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !finished.load(Ordering::SeqCst) {
            if stream.write_all(b"ping\n").is_err() {
                return;
            }
            std::thread::sleep(BEAT);
        }
    });
}

/// The local address this machine uses to reach `to` (no packet is sent: a UDP
/// "connection" only picks the route).
fn local_ip_towards(to: SocketAddr) -> String {
    UdpSocket::bind(("0.0.0.0", 0))
        .and_then(|s| s.connect(to).and_then(|_| s.local_addr()))
        .map_or_else(|_| "127.0.0.1".to_string(), |a| a.ip().to_string())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Takes one pending connection, if any, and reads its hello line into `waiting`; a peer
/// that sends no hello is told so. Sleeps 20 ms when nobody is waiting.
fn accept_hello(listener: &TcpListener, waiting: &mut Vec<(Hello, TcpStream)>) {
    match listener.accept() {
        Ok((mut stream, _)) => {
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(SILENT_AFTER));
            let mut line = String::new();
            let read = stream
                .try_clone()
                .map(BufReader::new)
                .and_then(|mut r| r.read_line(&mut line));
            match (read, serde_json::from_str::<Hello>(line.trim())) {
                (Ok(_), Ok(h)) => waiting.push((h, stream)),
                _ => {
                    let _ = send(
                        &mut stream,
                        &Notice::Error("expected a prh-native node's hello".into()),
                    );
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            std::thread::sleep(Duration::from_millis(20))
        }
        Err(_) => std::thread::sleep(Duration::from_millis(20)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(rank: usize) -> Hello {
        Hello {
            rank,
            nodes: 2,
            config: "c".into(),
            code: "v".into(),
            start_step: 0,
            host: "h".into(),
            pid: 1,
        }
    }

    #[test]
    fn joins_are_refused_naming_what_differs() {
        let lead = hello(0);
        assert!(Coordinator::refuse(&hello(1), &lead).is_none());
        let mut h = hello(1);
        h.config = "[optim]\nlr = 0.001\n".into();
        let mut lead = hello(0);
        lead.config = "[optim]\nlr = 0.0005\n".into();
        let why = Coordinator::refuse(&h, &lead).unwrap();
        assert!(
            why.contains("another config")
                && why.contains("optim.lr = 0.001 here, 0.0005 on node 0"),
            "{why}"
        );
        let lead = hello(0);
        let mut h = hello(1);
        h.code = "w".into();
        assert!(
            Coordinator::refuse(&h, &lead)
                .unwrap()
                .contains("other code")
        );
        let mut h = hello(1);
        h.start_step = 4;
        assert!(
            Coordinator::refuse(&h, &lead)
                .unwrap()
                .contains("from step 4")
        );
        let mut h = hello(1);
        h.nodes = 3;
        assert!(
            Coordinator::refuse(&h, &lead)
                .unwrap()
                .contains("--nodes 3")
        );
    }

    #[test]
    fn flags_are_checked() {
        let args = |nodes, rank, c: &str| NodeArgs {
            nodes,
            node_rank: rank,
            coordinator: c.into(),
            node_address: None,
            join_timeout: 1,
        };
        assert!(args(2, 1, "127.0.0.1:29500").check().is_ok());
        let e = args(2, 2, "127.0.0.1:29500")
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--node-rank 2"), "{e}");
        let e = args(2, 0, "nohost").check().unwrap_err().to_string();
        assert!(e.contains("HOST:PORT"), "{e}");
        let e = args(0, 0, "a:1").check().unwrap_err().to_string();
        assert!(e.contains("--nodes 0"), "{e}");
    }
}
