// SPDX-License-Identifier: MIT
// Small exact geometric solves shared by the ray queries and the swept collisions.
#pragma once

#include <cmath>
#include <limits>

namespace contextsteer {

/// Distance along the unit direction (dx, dy) from the origin to the disc of radius r
/// centred at q = (qx, qy) (relative to the origin); 0 when the origin is inside or on the
/// disc, +inf on a miss. Pure, allocation-free.
///
/// |t d − q|² = r² with |d| = 1: t² − 2bt + c = 0, b = d·q, c = |q|² − r². c <= 0: the
/// origin is inside (t = 0). Otherwise the near root t = b − sqrt(b² − c), written as
/// c / (b + sqrt(b² − c)) to avoid cancellation; b <= 0 (disc behind) or b² < c: miss.
/// A tangent ray (b² == c) hits.
inline double ray_circle(double qx, double qy, double r, double dx, double dy) {
  constexpr double kMiss = std::numeric_limits<double>::infinity();
  const double c = qx * qx + qy * qy - r * r;
  if (c <= 0.0) return 0.0;
  const double b = qx * dx + qy * dy;
  if (b <= 0.0) return kMiss;
  const double disc = b * b - c;
  if (disc < 0.0) return kMiss;
  return c / (b + std::sqrt(disc));
}

}  // namespace contextsteer
