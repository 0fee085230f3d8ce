// One live stream for the whole page, shared by every view: views subscribe while they are on screen.
import { useEffect, useRef, useState } from 'preact/hooks';
import { liveEvents } from './api.js';

const subscribers = new Set();
const stateListeners = new Set();
let state = 'connecting';
let stop = null;

/** Stops the stream (sign-out): the next startLive opens a new one with the tab's token of the moment. */
export function stopLive() {
  stop?.();
  stop = null;
  state = 'connecting';
  for (const fn of stateListeners) fn(state);
}

export function startLive() {
  stop ??= liveEvents(
    (type, data) => {
      for (const fn of subscribers) fn(type, data);
    },
    (next) => {
      state = next;
      for (const fn of stateListeners) fn(next);
    },
  );
}

/** 'connecting' | 'live' | 'reconnecting' */
export function useLiveState() {
  const [value, setValue] = useState(state);
  useEffect(() => {
    stateListeners.add(setValue);
    return () => stateListeners.delete(setValue);
  }, []);
  return value;
}

/** Calls `fn(type, data)` for each live event while the component is mounted (the latest `fn`, no resubscribing). */
export function useLiveEvents(fn) {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    const forward = (type, data) => latest.current(type, data);
    subscribers.add(forward);
    return () => subscribers.delete(forward);
  }, []);
}

/**
 * Runs `fn` at most once per `ms` however often `trigger()` is called: a burst of status changes becomes one
 * refetch, never a request per event.
 */
export function useThrottled(fn, ms) {
  const latest = useRef(fn);
  latest.current = fn;
  const timer = useRef(null);
  const last = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);
  return () => {
    if (timer.current) return;
    const wait = Math.max(0, last.current + ms - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      last.current = Date.now();
      latest.current();
    }, wait);
  };
}
