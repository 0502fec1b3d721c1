// STUB: lets the `sqlite` branch compile WorldCountries.swift on its own.
// Drop this file at merge; the real `SeedList` lives elsewhere in CountriesCore.
public enum SeedList {}
