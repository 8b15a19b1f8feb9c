import jaxscale as js

runs = js.load_runs("../shared/data/chinchilla_svg_extracted_data.csv", drop_highest=5)  # Epoch's runs
fitted = js.fit(runs, law="chinchilla", bootstrap=1000)  # Approach 3, 1000 bootstrap refits
print(fitted.summary())  # A, B, E, alpha, beta, a, b, N*(C), D*(C): estimates, 95% intervals
figures = fitted.plot()  # matplotlib Figures: residuals, isoFLOP curves
posterior = js.bayes(runs, chains=2, warmup=300, samples=300, seed=0)  # NUTS
print(posterior.summary())  # posterior means, 95% HDIs, R-hat, the reconciled exponent
study = js.sensitivity(fitted, compute=[1e24])  # elasticities, delta method, run influence
print(study.summary())
print(js.allocate(posterior, compute=[1e22, 1e24]).summary())  # N*(C), D*(C) with 95% HDIs
