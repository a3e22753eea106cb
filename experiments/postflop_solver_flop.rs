// postflop-solver (https://github.com/b-inary/postflop-solver, the Rust engine of Desktop Postflop)
// on the isomorphic flop spot of tensorcfr's hold'em tutorial, for the side-by-side rows of
// docs/tutorials/holdem.md ("Beside postflop-solver") and experiments/results/peer-postflop-solver-flop.*.
//
// Its tree is set to tensorcfr's `holdem_flop(board=Td9d6h, pot=60, stack=370, bets=(0.5,), cap=1, ...)`:
// bets and raises of 50% on every street, its all-in and merging thresholds at 0, and every bet or
// raise after two aggressive actions of a street removed with `ActionTree::remove_line` (18 lines):
// 120 decision nodes, 26 chance nodes and 185 terminals. It runs its own DCFR and suit isomorphism
// at float32; seconds count `solve_step` only, with `compute_exploitability` every 10 iterations
// untimed, until 0.5% of the pot (TARGET_PCT). Two range arguments replace the spot's ranges.
//
// Not part of tensorcfr's build. In a checkout of postflop-solver (commit 9d1509f was used):
//     cp experiments/postflop_solver_flop.rs POSTFLOP_SOLVER/examples/flop_h2h.rs
//     cd POSTFLOP_SOLVER && RUSTFLAGS="--cap-lints warn" cargo build --release --no-default-features \
//         --features rayon --example flop_h2h         # newer rustc denies a lint its 2023 code trips
//     RAYON_NUM_THREADS=2 ./target/release/examples/flop_h2h    # one JSON line
use postflop_solver::*;
use std::time::Instant;

fn aggression(h: &[Action]) -> u32 {
    let (mut aggr, mut checked) = (0, false);
    for a in h {
        match a {
            Action::Bet(_) | Action::Raise(_) | Action::AllIn(_) => { aggr += 1; checked = false; }
            Action::Check => { if checked { aggr = 0; checked = false; } else { checked = true; } }
            Action::Call => { aggr = 0; checked = false; }
            _ => {}
        }
    }
    aggr
}

fn cap(tree: &mut ActionTree, h: &mut Vec<Action>, removed: &mut u32) {
    tree.apply_history(h).unwrap();
    if tree.is_terminal_node() { return; }
    let actions: Vec<Action> = tree.available_actions().to_vec();
    let mut keep = vec![];
    for a in actions {
        let aggressive = matches!(a, Action::Raise(_) | Action::AllIn(_) | Action::Bet(_));
        if aggressive && aggression(h) >= 2 {
            let mut line = h.clone(); line.push(a);
            tree.remove_line(&line).unwrap();
            *removed += 1;
        } else { keep.push(a); }
    }
    for a in keep { h.push(a); cap(tree, h, removed); h.pop(); }
}

fn count(tree: &mut ActionTree, h: &mut Vec<Action>, c: &mut [u32; 3]) {
    tree.apply_history(h).unwrap();
    if tree.is_terminal_node() { c[1] += 1; return; }
    if tree.is_chance_node() { c[2] += 1; }
    c[0] += 1;
    let actions: Vec<Action> = tree.available_actions().to_vec();
    for a in actions { h.push(a); count(tree, h, c); h.pop(); }
}

fn peak_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    for l in s.lines() { if l.starts_with("VmHWM:") {
        return l.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0; } }
    0.0
}

fn main() {
    let r0 = "22+,A2s+,A8o+,K7s+,K9o+,Q8s+,Q9o+,J8s+,J9o+,T8+,97+,86+,75+,64s+,65o,54,43s";
    let r1 = "22+,A4s+,A9o+,K9s+,KTo+,Q9s+,QTo+,J9+,T9,98s,87s,76s,65s";
    let args: Vec<String> = std::env::args().collect();
    let (r0, r1) = if args.len() > 2 { (args[1].as_str(), args[2].as_str()) } else { (r0, r1) };
    let target_pct: f32 = std::env::var("TARGET_PCT").ok().map(|s| s.parse().unwrap()).unwrap_or(0.5);
    let card_config = CardConfig {
        range: [r0.parse().unwrap(), r1.parse().unwrap()],
        flop: flop_from_str("Td9d6h").unwrap(), turn: NOT_DEALT, river: NOT_DEALT,
    };
    let b = BetSizeOptions::try_from(("50%", "50%")).unwrap();
    let tree_config = TreeConfig {
        initial_state: BoardState::Flop, starting_pot: 60, effective_stack: 370,
        rake_rate: 0.0, rake_cap: 0.0,
        flop_bet_sizes: [b.clone(), b.clone()], turn_bet_sizes: [b.clone(), b.clone()],
        river_bet_sizes: [b.clone(), b], turn_donk_sizes: None, river_donk_sizes: None,
        add_allin_threshold: 0.0, force_allin_threshold: 0.0, merging_threshold: 0.0,
    };
    let t = Instant::now();
    let mut tree = ActionTree::new(tree_config).unwrap();
    let mut removed = 0;
    cap(&mut tree, &mut vec![], &mut removed);
    let mut c = [0u32; 3];
    count(&mut tree, &mut vec![], &mut c);
    tree.back_to_root();
    let mut game = PostFlopGame::with_config(card_config, tree).unwrap();
    game.allocate_memory(false);
    let build_s = t.elapsed().as_secs_f64();
    let (mem, _) = game.memory_usage();
    let target = 60.0 * target_pct / 100.0;
    let (mut solve_s, mut it, mut expl) = (0.0, 0u32, f32::INFINITY);
    while it < 1000 {
        let t = Instant::now();
        solve_step(&game, it);
        solve_s += t.elapsed().as_secs_f64();
        it += 1;
        if it % 10 == 0 { expl = compute_exploitability(&game); if expl <= target { break; } }
    }
    finalize(&mut game);
    game.cache_normalized_weights();
    let ev0 = compute_average(&game.expected_values(0), game.normalized_weights(0));
    let ev1 = compute_average(&game.expected_values(1), game.normalized_weights(1));
    println!("{{\"decision_nodes\": {}, \"terminals\": {}, \"chance\": {}, \"removed_lines\": {}, \"hands\": [{}, {}], \
\"memory_usage_mb\": {:.1}, \"build_s\": {:.2}, \"iterations\": {}, \"solve_s\": {:.3}, \"ms_per_iteration\": {:.2}, \
\"exploitability\": {}, \"percent_pot\": {:.4}, \"ev_oop\": {}, \"ev_ip\": {}, \"peak_mb\": {:.0}, \"threads\": {}}}",
        c[0] - c[2], c[1], c[2], removed, game.private_cards(0).len(), game.private_cards(1).len(),
        mem as f64 / 1048576.0, build_s, it, solve_s, solve_s * 1000.0 / it as f64, expl, expl / 60.0 * 100.0,
        ev0, ev1, peak_mb(), rayon::current_num_threads());
}
