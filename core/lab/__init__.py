"""The lessons' helpers: measurements, toy inputs, experiments and exercises built on the model package.

The model itself (config, hooks, masks, positional, norm, attention, layers, model, trace) lives one level up, in
`core`; what is here exists to teach it: costs, gradients, saturation, mask conventions, error analysis, the
worked exercises and the depth experiment's classifier. Nothing here is needed to build or train a model.
"""
