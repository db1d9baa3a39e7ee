/**
 * The console's refusal of what an admin typed (a filter, a date, a page position): shown on the
 * page with status 400 (console-pages.ts consoleStatusOf), never a 500.
 */
export class ConsoleInputError extends Error {}
