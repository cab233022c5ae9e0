// SPDX-License-Identifier: MIT
// Collisions of circular agents: swept circle against the walls (slide), and push-apart.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "contextsteer/common.hpp"
#include "contextsteer/neighbours.hpp"
#include "contextsteer/world.hpp"

namespace contextsteer {

/// Largest number of slide iterations of a sweep.
inline constexpr int kMaxSlideIterations = 16;

/// Result of a sweep: where the circle ends, and the wall normals it touched.
struct Sweep {
  Vec2 position{};
  int contacts = 0;                     ///< walls touched (<= iterations)
  Vec2 normals[kMaxSlideIterations]{};  ///< unit normals from the wall towards the circle
};

/// Moves a circle of radius r >= 0 from p by the displacement d through the world's
/// segments and circles (obstacles in `layers`), never crossing one ("collide and slide"):
/// the time of impact of the swept circle (a ray against each wall grown by r: a capsule,
/// or a circle grown by r) stops the motion just before contact — a skin of
/// 1e-3·r + 1e-6·|p|∞ along the contact normal, so float32 rounding of the result never
/// lands inside — then the rest of the displacement, with its component into the wall
/// removed, continues along the wall, for at most `iterations` (1..kMaxSlideIterations)
/// contacts; after the last one the circle stays at the contact. A circle that starts
/// closer than r to a wall (placed there by the user) may move away from it or along it,
/// never further in: a sweep that would end deeper in an obstacle than it started ends at
/// the nearest float32 neighbour of its end that does not, else at its last contact stop
/// that does not, else at p. Any speed: the sweep covers the whole displacement, so nothing is
/// tunnelled through. Precondition world.indexed(). Pure, allocation-free, reentrant;
/// maths in double relative to p.
Sweep sweep_circle(const World& world, Vec2 p, Vec2 d, float r, int iterations,
                   std::uint32_t layers);

/// Whether a circle of radius r >= 0 at p, moving along the direction u (any nonzero
/// length), goes further into an obstacle (in `layers`) that it starts within r of (or
/// on, within rounding): sweep_circle's test, against each such obstacle. The move goes
/// into one when its unit component along the normal from the obstacle's closest point
/// to p is below −along: sweep_circle slides for components down to −1e-9; a direction
/// given in float32 (a slot turned by a heading) is parallel to a wall only within about
/// 1e-7. False when it starts clear of them all, or leaves or slides along every one it
/// touches; in a corner, true for every direction into either wall. Precondition
/// world.indexed().
bool moves_into(const World& world, Vec2 p, Vec2 u, float r, std::uint32_t layers,
                double along = 1e-9);

/// Row range of the wall collision of a step: agent i (alive) moves from start[i] to
/// target[i] ((N,2) each); target[i] is replaced by the swept position, and the component
/// of velocity[i] ((N,2)) into each touched wall is removed (it slides). contacts[i] (N,)
/// counts the steps in which agent i touched a wall (+1 at most per call). When
/// `heading` is given ((N,) radians), agents that touched a wall face their slid velocity
/// (when it has a direction, `has_direction` with `max_speed` (N,), or 1 when it is not
/// given): the Godot recipe's rotation = velocity.angle() after
/// move_and_slide. With `stop` (the Godot recipe's move_and_collide) the circle stops at
/// the first contact, the rest of the displacement is dropped, and velocity and heading
/// are left as they are (`iterations` is not used). Serial, allocation-free, reentrant.
void collide_rows(const World& world, const float* start, float* target, float* velocity,
                  const float* radius, const std::uint8_t* alive, int iterations,
                  std::uint32_t layers, std::int32_t* contacts, std::size_t begin, std::size_t end,
                  float* heading = nullptr, bool stop = false, const float* max_speed = nullptr);

/// Agent–agent overlap count and push-apart (Jacobi: every agent reads the same
/// read-only positions, so the result does not depend on the order or thread). For agent
/// i (alive), every neighbour j in `grid` (built over `positions`) with centre distance
/// d < r_i + r_j overlaps: overlaps[i] += the number of such j. With `push`, agent i moves
/// by relax·Σ_j ½(r_i + r_j − d)·n_ij (n_ij the unit vector from j to i; coincident
/// centres separate along ±x by index order), swept against the world (when given) so
/// the push never crosses a wall. Writes out[i] ((N,2), distinct from positions); dead
/// agents are copied. `touched` (optional, (N,)) gets 1 for the agents that overlapped
/// anyone, else 0. `max_radius` is the largest radius among alive agents. `kinematic`
/// (optional, (N,)): a kinematic agent never moves (its overlaps are still counted), and
/// an agent pushed by a kinematic one takes the whole overlap, r_i + r_j − d, instead of
/// half of it. Serial, allocation-free, reentrant.
void push_apart_rows(const NeighborGrid& grid, const float* positions, const float* radius,
                     const std::uint8_t* alive, const std::uint8_t* kinematic, float max_radius,
                     bool push, float relax, const World* world, int iterations,
                     std::uint32_t layers, std::int32_t* overlaps, float* out, std::size_t begin,
                     std::size_t end, std::uint8_t* touched = nullptr);

/// Calls fn(j, ex, ey, d, reach) for every agent j != i in `grid` (built over
/// `positions`, or made from such a grid by NeighborGrid::rebuild_from) that overlaps
/// agent i: centre distance d < reach = r_i + r_j, with (ex, ey) = p_i − p_j, all in
/// double, in the grid's visiting order. The overlap test of push-apart.
template <class Fn>
void for_each_overlap(const NeighborGrid& grid, const float* positions, const float* radius,
                      float max_radius, std::size_t i, Fn&& fn) {
  const Vec2 p = {positions[2 * i], positions[2 * i + 1]};
  const float ri = radius[i];
  grid.visit(p, ri + max_radius, [&](std::int32_t j32, float) {
    const auto j = static_cast<std::size_t>(j32);
    if (j == i) return;
    const double ex = static_cast<double>(p.x) - positions[2 * j];
    const double ey = static_cast<double>(p.y) - positions[2 * j + 1];
    const double d = std::sqrt(ex * ex + ey * ey);
    const double reach = static_cast<double>(ri) + radius[j];
    if (d < reach) fn(j, ex, ey, d, reach);
  });
}

/// One alive agent i of push_apart_rows: writes out[i] and returns how many neighbours
/// it overlaps.
std::int32_t push_apart_row(const NeighborGrid& grid, const float* positions, const float* radius,
                            const std::uint8_t* kinematic, float max_radius, bool push, float relax,
                            const World* world, int iterations, std::uint32_t layers, std::size_t i,
                            float* out);

}  // namespace contextsteer
