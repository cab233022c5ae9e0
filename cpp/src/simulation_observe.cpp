// SPDX-License-Identifier: MIT
// The simulation's observers: metrics and histories, updated at the end of every step.
#include <algorithm>
#include <cmath>

#include "parallel.hpp"
#include "contextsteer/simulation.hpp"

namespace contextsteer {

namespace {
constexpr std::size_t kObserveGrain = 128;
}  // namespace

void Simulation::configure_metrics(const MetricsParams& params) {
  const World* world = world_ && !world_->grid().empty() ? world_.get() : nullptr;
  metrics_.configure(params, agents_->view(), world, time_);
}

void Simulation::attach(std::shared_ptr<History> history) {
  prune_histories();
  if (std::find(histories_.begin(), histories_.end(), history) == histories_.end())
    histories_.push_back(std::move(history));
}

void Simulation::prune_histories() {
  std::erase_if(histories_, [](const auto& h) { return h->detached(); });
}

void Simulation::make_history_room(std::size_t steps, long double memory) {
  // The bound is for every History together: the buffers after the call, and the
  // largest one replaced (they grow one at a time, each old buffer freed after its copy).
  // Each was checked alone: two Histories that each fit took 280 MiB under a 200 MiB
  // bound (fuzz round 26).
  long double total = 0.0L, replaced = 0.0L;
  std::size_t first_more = 0;
  bool any = false;
  for (const auto& h : histories_) {
    if (h->detached()) continue;
    const std::size_t more = h->due_in(step_count_, steps);
    const History::Room room = h->room_bytes(more, sensed() != nullptr);
    total += room.after;
    replaced = std::max(replaced, room.replaced);
    if (room.allocates && !any) first_more = more, any = true;
  }
  if (any && total + replaced > memory) throw HistoryOutOfMemory(first_more);
  for (const auto& h : histories_)
    if (!h->detached()) h->make_room(h->due_in(step_count_, steps), sensed() != nullptr);
}

bool Simulation::history_allocates(std::size_t steps) const {
  for (const auto& h : histories_)
    if (!h->detached() && h->room_bytes(h->due_in(step_count_, steps), !sensed_.empty()).allocates)
      return true;
  return false;
}

void Simulation::detach(History* history) {
  // Only a flag: the list itself belongs to the stepping thread (observe() prunes it).
  if (history) history->mark_detached();
}

void Simulation::observe() {
  const AgentsView a = agents_->view();
  prepared_ = lists_ready_ = walls_ready_ = false;  // any were the last step's
  if (metrics_.enabled()) {
    const World* world = world_ && !world_->grid().empty() ? world_.get() : nullptr;
    // When the steering queries neighbours, the next step's neighbour grid and lists are
    // made here, over the committed positions, and the metrics' agent query shares their
    // grid and its visits (NeighborRowsOut): one grid visit an agent serves both. The next
    // step uses the lists if nothing has moved since (build_neighbors).
    NeighborRowsOut nb;
    if (needs_neighbors_ && config_.max_neighbors > 0) {
      const float r = current_neighbor_radius(a);
      if (std::isfinite(r) && r >= 0.0f) {
        grid_.rebuild(a.position, a.alive, n_, r > 0.0f ? r : 1.0f, config_.max_neighbors);
        nb = {r, config_.max_neighbors, nb_indices_.data(), nb_counts_.data()};
      }
    }
    const NeighborRowsOut* lists = nb.indices ? &nb : nullptr;
    // Each agent's nearest wall, for the slot wall sensors of the next step.
    if (world) {
      near_distance_.resize(n_);
      near_normal_.resize(2 * n_);
      near_obstacle_.resize(n_);
      near_reach_.resize(n_);
      near_ = {near_distance_.data(), near_normal_.data(), near_obstacle_.data(),
               near_reach_.data(), metrics_.params().layers};
    }
    // Otherwise the agent grid over the committed positions comes from the push-apart grid
    // that finish() built over the same alive agents just before push-apart moved them.
    metrics_.prepare(a, world, &push_grid_, lists ? &grid_ : nullptr);
    parallel_for(n_, kObserveGrain, [&](std::size_t b, std::size_t e) {
      metrics_.update_rows(a, world, stuck_.data(), time_, b, e, lists, world ? &near_ : nullptr);
    });
    if (lists || world) {
      prepared_pos_.assign(a.position, a.position + 2 * n_);
      prepared_alive_.assign(a.alive, a.alive + n_);
      prepared_ = true;
    }
    if (lists) {
      lists_radius_ = nb.radius;
      lists_ready_ = true;
    }
    if (world) {
      walls_world_ = world;
      walls_generation_ = world->index_generation();
      walls_ready_ = true;
    }
    if (metrics_.params().overtakes) {
      parallel_for(n_, kObserveGrain,
                   [&](std::size_t b, std::size_t e) { metrics_.overtake_rows(a, b, e); });
    }
    metrics_.finish_update();
  }
  prune_histories();
  for (const auto& h : histories_) {
    if (!h->detached() && h->due(step_count_))
      h->capture(step_count_, time_, a, interest_.data(), danger_.data(), sensed(),
                 {perceived_pos_.data(), perceived_head_.data()}, metrics_, stuck_.data());
  }
}

}  // namespace contextsteer
