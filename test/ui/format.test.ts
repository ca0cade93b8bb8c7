import { describe, expect, it } from 'vitest';
import { fit, formatAgo, formatCount, formatDuration, formatIn, formatRate, percent, truncate } from '../../src/ui/format.js';

describe('format', () => {
  it('truncates by code point with an ellipsis', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
    expect(truncate('😀😀😀', 2)).toBe('😀…');
    expect(truncate('abc', 0)).toBe('');
  });

  it('fits to an exact width, either side', () => {
    expect(fit('ab', 4)).toBe('ab  ');
    expect(fit('ab', 4, 'right')).toBe('  ab');
    expect(fit('a\nb', 4)).toBe('a b ');
  });

  it('formats counts, durations, rates, ages and percentages', () => {
    expect([formatCount(9999), formatCount(12_345), formatCount(1_250_000)]).toEqual(['9999', '12.3k', '1.3M']);
    expect([formatDuration(null), formatDuration(75), formatDuration(3725)]).toEqual(['-', '1:15', '1:02:05']);
    expect([formatRate(null), formatRate(1.25), formatRate(42.4)]).toEqual(['-', '1.3', '42']);
    const now = Date.parse('2025-06-01T12:00:00Z');
    expect(formatAgo(null, now)).toBe('never');
    expect(formatAgo('2025-06-01T11:59:30Z', now)).toBe('30s ago');
    expect(formatAgo('2025-06-01T09:00:00Z', now)).toBe('3h ago');
    expect(formatAgo('2025-01-01T00:00:00Z', now)).toBe('2025-01-01');
    expect([formatIn(null, now), formatIn('2025-06-01T11:00:00Z', now), formatIn('2025-06-01T12:00:30Z', now), formatIn('2025-06-01T12:42:00Z', now)]).toEqual(['-', 'now', 'in 30s', 'in 42m']);
    expect([formatIn('2025-06-02T15:00:00Z', now), formatIn('2025-07-01T00:00:00Z', now), formatIn('not a date', now)]).toEqual(['in 1d', '2025-07-01', '-']);
    expect([percent(1, 3), percent(5, 0), percent(7, 5)]).toEqual([33, 0, 100]);
  });
});
