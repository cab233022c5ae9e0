// SPDX-License-Identifier: MIT
// The simulation's observers: metrics and histories, updated at the end of every step.
#include <algorithm>

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
  if (std::find(histories_.begin(), histories_.end(), history) == histories_.end())
    histories_.push_back(std::move(history));
}

void Simulation::detach(const History* history) {
  std::erase_if(histories_, [&](const auto& h) { return h.get() == history; });
}

void Simulation::observe() {
  const AgentsView a = agents_->view();
  if (metrics_.enabled()) {
    const World* world = world_ && !world_->grid().empty() ? world_.get() : nullptr;
    // The agent grid over the committed positions, from the push-apart grid that finish()
    // built over the same alive agents just before push-apart moved them (serial).
    metrics_.prepare(a, world, &push_grid_);
    parallel_for(n_, kObserveGrain, [&](std::size_t b, std::size_t e) {
      metrics_.update_rows(a, world, stuck_.data(), time_, b, e);
    });
    if (metrics_.params().overtakes) {
      parallel_for(n_, kObserveGrain,
                   [&](std::size_t b, std::size_t e) { metrics_.overtake_rows(a, b, e); });
    }
    metrics_.finish_update();
  }
  for (const auto& h : histories_) {
    if (h->due(step_count_))
      h->capture(step_count_, time_, a, interest_.data(), danger_.data(), sensed(), metrics_,
                 stuck_.data());
  }
}

}  // namespace contextsteer
