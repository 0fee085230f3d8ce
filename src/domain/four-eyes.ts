// Four-eyes (decisions 103, 177-181): when a movement of funds waits for a second pair of eyes, and whose eyes count.
// Pure: the facts (amounts already moved without approval, who asked, whether operator accounts exist) come in.

/**
 * A withdrawal waits for a second operator when it, with the withdrawals that left without one within the rolling
 * window (every operator, every chain), would pass the threshold (decision 177): splitting cannot beat it.
 */
export function withdrawalNeedsApproval(thresholdMicros: bigint | null, amountMicros: bigint, leftWithoutApprovalMicros: bigint): boolean {
  return thresholdMicros !== null && leftWithoutApprovalMicros + amountMicros > thresholdMicros;
}
